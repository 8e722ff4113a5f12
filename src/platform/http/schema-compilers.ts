import AjvCompiler from '@fastify/ajv-compiler';
import {
  SerializerSelector,
  type Serializer,
  type SerializerFactory,
} from '@fastify/fast-json-stringify-compiler';
import type { fieldErrors } from './problem.ts';

/** An Ajv validate function, as far as Fastify uses it. */
interface Validator {
  (data: unknown): unknown;
  errors?: unknown;
}

/**
 * Ajv's settings for every part of a request. strictNumbers: NaN and ±Infinity (`1e309` parses as
 * Infinity) are not numbers to a schema. A body adds no type coercion.
 */
const REQUEST_OPTIONS = { removeAdditional: false, allErrors: true, useDefaults: true, strictNumbers: true };

/** A body's validate function, its errors as `fieldErrors` reads them. */
export interface BodyValidator {
  (data: unknown): boolean;
  errors?: Parameters<typeof fieldErrors>[0] | null;
}

/**
 * `schema` compiled as a route's body is, for a body validated outside a route (a batch's items, an
 * MQTT message); `useDefaults: false` leaves absent fields absent.
 */
export function bodyValidator(route: { schema: unknown; url: string }, useDefaults = true): BodyValidator {
  const build = AjvCompiler()(
    {},
    { customOptions: { ...REQUEST_OPTIONS, useDefaults, coerceTypes: false } },
  ) as unknown as (route: {
    schema: unknown;
    method: string;
    url: string;
    httpPart: string;
  }) => BodyValidator;
  return build({ schema: route.schema, method: 'POST', url: route.url, httpPart: 'body' });
}

/** What Fastify's `schemaController.compilersFactory` takes, and a way to compile ahead. */
export interface SchemaCompilers {
  readonly buildValidator: ReturnType<typeof validatorFactory>;
  readonly buildSerializer: SerializerFactory;
  /** Compiles every validator not yet used and answers how many; throws what Ajv throws. */
  compileValidators(): number;
}

/**
 * The request validators and response serializers of one Fastify instance. Both are compiled when first
 * used, not when Fastify asks for them at start: a process answers only some of its routes.
 */
export function createSchemaCompilers(): SchemaCompilers {
  const uncompiled = new Set<() => void>();
  return {
    buildValidator: validatorFactory(uncompiled),
    buildSerializer: serializerFactory(),
    compileValidators() {
      const pending = [...uncompiled];
      for (const compile of pending) compile();
      return pending.length;
    },
  };
}

/**
 * Body parts are validated without type coercion (a string is never a number), while query strings,
 * params and headers, which are always text on the wire, are coerced. Each validator is compiled when
 * its route part is first validated: Ajv's code generation for every route at start was 0.9 s of CPU
 * (a sixth of an API process's start). The cost is the serializers' below: a schema Ajv cannot compile
 * fails at its route's first request instead of at start, so a test compiles them all
 * (`compileValidators`).
 */
function validatorFactory(uncompiled: Set<() => void>) {
  const build = AjvCompiler();
  return (externalSchemas: unknown, ajvOptions: { customOptions?: Record<string, unknown> }) => {
    const compiler = (coerceTypes: false | 'array') =>
      build(externalSchemas as never, {
        ...ajvOptions,
        customOptions: { ...ajvOptions.customOptions, ...REQUEST_OPTIONS, coerceTypes },
      });
    // Each compiler is an Ajv instance that compiles the JSON Schema meta-schema before its first
    // schema (30–60 ms): made when first needed too, as Fastify asks for one per plugin context.
    let strict: ReturnType<typeof compiler> | undefined;
    let coercing: ReturnType<typeof compiler> | undefined;
    return (route: { httpPart?: string }) => {
      let validate: Validator | undefined;
      const compile = (): Validator => {
        uncompiled.delete(compile);
        const forPart =
          route.httpPart === 'body' ? (strict ??= compiler(false)) : (coercing ??= compiler('array'));
        return (validate ??= forPart(route));
      };
      uncompiled.add(compile);
      // Fastify reads a failed validation's errors from the function it was given.
      const lazy: Validator = (data) => {
        const validator = validate ?? compile();
        const valid = validator(data);
        lazy.errors = validator.errors;
        return valid;
      };
      return lazy;
    };
  };
}

/**
 * Response serializers, one per schema and compiled when a response first needs it. Fastify asks for one
 * per route and status at start (445, over 308 distinct schemas); fast-json-stringify generates a function
 * for each, and compiled then they held 6 MB of an API process's heap (2.5 MB of it generated source, which
 * V8 keeps), while a process answers only some of its routes and routes share schemas (a policy, a
 * problem). The cost: a schema fast-json-stringify cannot compile fails at its route's first response
 * (a 500, logged) instead of at start.
 */
function serializerFactory(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    const compiled = new WeakMap<object, Serializer>();
    return (route) => {
      let serialize: Serializer | undefined;
      return (data: unknown) => {
        if (serialize === undefined) {
          const { schema } = route;
          const key = typeof schema === 'object' && schema !== null ? schema : undefined;
          serialize = (key && compiled.get(key)) ?? compile(route);
          if (key) compiled.set(key, serialize);
        }
        return serialize(data);
      };
    };
  };
}
