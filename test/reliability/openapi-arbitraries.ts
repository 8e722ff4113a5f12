import fc from 'fast-check';

// Requests generated from the service's own OpenAPI document, for the reliability suites that probe
// every route (R7 isolation, R8 fuzzing).

export interface Schema {
  readonly type?: string | readonly string[];
  readonly $ref?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly format?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxItems?: number;
  readonly nullable?: boolean;
}
export interface Parameter {
  readonly in: 'path' | 'query' | 'header';
  readonly name: string;
  readonly required?: boolean;
  readonly schema?: Schema;
}
export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly parameters: readonly Parameter[];
  readonly body: Schema | undefined;
  readonly security: ReadonlyArray<Readonly<Record<string, unknown>>>;
}

/** Field names whose values are secrets (passwords, codes, tokens, card data). */
export const SECRET_FIELDS = /password|secret|token|^code$|^session$|card|cvc/;

export interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, Schema>> };
}

/** The document's operations, each with its parameters, JSON body schema and security. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (op['parameters'] ?? []) as Parameter[],
        body: (op['requestBody'] as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.[
          'application/json'
        ]?.schema,
        security: (op['security'] ?? []) as Array<Record<string, unknown>>,
      })),
  );
}

/**
 * Generators of values for the document's schemas: `known` are real identifiers mixed into strings
 * (so that paths and references also hit existing resources), `secret` gives secret fields' values.
 */
export function schemaArbitraries(
  doc: OpenApiDocument,
  known: readonly string[],
  secret: (field: string) => fc.Arbitrary<string>,
) {
  const components = doc.components?.schemas ?? {};
  const resolve = (schema: Schema): Schema =>
    schema.$ref === undefined ? schema : resolve(components[schema.$ref.split('/').at(-1) ?? ''] ?? {});

  /** Values valid under `schema` (as far as a generator can tell), secret fields from `secret`. */
  function valid(input: Schema, depth = 0): fc.Arbitrary<unknown> {
    const schema = resolve(input);
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
    const choices = schema.anyOf ?? schema.oneOf;
    if (choices !== undefined) return fc.oneof(...choices.map((c) => valid(c, depth)));
    if (schema.allOf !== undefined) return valid(schema.allOf[0] ?? {}, depth);
    const types =
      schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type }, depth)));
    switch (types[0]) {
      case 'string':
        return text(schema);
      case 'integer':
        return fc.integer({
          min: Math.max(schema.minimum ?? -1e6, -(2 ** 31)),
          max: Math.min(schema.maximum ?? 1e6, 2 ** 31 - 1),
        });
      case 'number':
        return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 4
          ? fc.constant([])
          : fc.array(valid(schema.items ?? {}, depth + 1), { maxLength: Math.min(schema.maxItems ?? 3, 3) });
      case 'object': {
        if (depth > 4) return fc.constant({});
        const properties = schema.properties ?? {};
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, property] of Object.entries(properties))
          model[key] =
            SECRET_FIELDS.test(key) && resolve(property).type === 'string'
              ? secret(key)
              : valid(property, depth + 1);
        return fc.record(model, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) });
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  function text(schema: Schema): fc.Arbitrary<string> {
    const minLength = schema.minLength ?? 0;
    const maxLength = Math.min(schema.maxLength ?? 40, 200);
    switch (schema.format) {
      case 'date-time':
        return fc
          .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'date':
        return fc
          .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
      case 'email':
        return fc.emailAddress();
      case 'uri':
        // `.invalid` never resolves: a generated webhook receiver cannot reach anything.
        return fc.constantFrom('https://receiver.invalid/hook', 'http://127.0.0.1/hook', 'ftp://x.invalid');
    }
    if (schema.pattern !== undefined)
      try {
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => s.length <= maxLength && s.length >= minLength);
      } catch {
        // A pattern fast-check cannot generate from: any text.
      }
    const any = fc.string({ minLength, maxLength });
    return known.length === 0 ? any : fc.oneof(fc.constantFrom(...known), any);
  }

  return { valid, resolve };
}

/** Text no JSON parser should choke on, and some that should be refused politely. */
export const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '../../etc/passwd',
    '%00',
    "'; drop table policies; --",
    '\ud800',
    '😀'.repeat(50),
    'x'.repeat(5000),
    '${jndi:ldap://x}',
  ),
);
