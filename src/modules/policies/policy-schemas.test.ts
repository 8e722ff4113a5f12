import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import {
  examplePolicyInput,
  schemaErrors,
  validatePolicyInputSchema,
} from '../../../test/support/policy-arbitraries.ts';
import {
  CUSTOM_MAX_ITEMS,
  POLICY_INPUT_EXAMPLE,
  PolicyInputSchema,
  PolicyResponseSchema,
  PolicyVersionSchema,
  type PolicyResponse,
  type PolicyVersion,
} from './policy-schemas.ts';
import { normalisePolicyInput, validatePolicyInput } from './rules/policy-validation.ts';

/** The subset of JSON Schema these schemas use, for walking them. */
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  pattern?: string;
  format?: string;
  description?: string;
  default?: unknown;
}

const inputSchema = PolicyInputSchema as unknown as JsonSchema;

interface Field {
  /** Pointer segments from the body root; array items are at index 0. */
  readonly path: readonly string[];
  readonly schema: JsonSchema;
}

/** Every property of a schema, depth first, with objects inside arrays reached through index 0. */
function fields(schema: JsonSchema, path: readonly string[] = []): Field[] {
  const out: Field[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const childPath = [...path, key];
    out.push({ path: childPath, schema: child });
    if (child.properties !== undefined) out.push(...fields(child, childPath));
    if (child.items !== undefined) {
      if (child.items.properties !== undefined) out.push(...fields(child.items, [...childPath, '0']));
      else out.push({ path: [...childPath, '0'], schema: child.items });
    }
  }
  return out;
}

/** Every object schema that forbids unknown fields, with its path. */
function closedObjects(schema: JsonSchema, path: readonly string[] = []): (readonly string[])[] {
  const out: (readonly string[])[] = schema.additionalProperties === false ? [path] : [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (child.properties !== undefined) out.push(...closedObjects(child, [...path, key]));
    if (child.items?.properties !== undefined) out.push(...closedObjects(child.items, [...path, key, '0']));
  }
  return out;
}

/** The example with a driver who has convictions and claims: every array holds an item. */
const FULL_BODY = examplePolicyInput({
  additional_drivers: [{ ...POLICY_INPUT_EXAMPLE.proposer, relationship: 'spouse' }],
});

const pointer = (path: readonly string[]) => `/body${path.map((p) => `/${p}`).join('')}`;

/** A copy of `body` with `value` at `path`, creating objects and arrays on the way. */
function withValue(body: unknown, path: readonly string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(body) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  path.slice(0, -1).forEach((key, i) => {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = path[i + 1] === '0' ? [] : {};
    node = node[key] as Record<string, unknown>;
  });
  node[path.at(-1) ?? ''] = value;
  return copy;
}

function without(body: unknown, path: readonly string[]): Record<string, unknown> {
  const copy = structuredClone(body) as Record<string, unknown>;
  const parent = path
    .slice(0, -1)
    .reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, copy);
  Reflect.deleteProperty(parent, path.at(-1) ?? '');
  return copy;
}

/** Values that break `schema`, each of which must be reported at the field's own path. */
function brokenValues(schema: JsonSchema): unknown[] {
  if (schema.enum !== undefined) return ['not-one-of-them', 7];
  switch (schema.type) {
    case 'string': {
      const values: unknown[] = [42, null];
      if (schema.minLength !== undefined) values.push('');
      if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1));
      if (schema.pattern !== undefined || schema.format !== undefined) values.push('!not valid!');
      return values;
    }
    case 'integer':
    case 'number': {
      const values: unknown[] = ['7', true];
      if (schema.type === 'integer') values.push(1.5);
      if (schema.minimum !== undefined) values.push(schema.minimum - 1);
      if (schema.maximum !== undefined) values.push(schema.maximum + 1);
      return values;
    }
    case 'boolean':
      return ['true', 1, null];
    case 'array':
      return [
        {},
        'x',
        ...(schema.maxItems === undefined ? [] : [Array.from({ length: schema.maxItems + 1 }, () => null)]),
      ];
    case 'object':
      return ['x', [], 3];
    default:
      throw new Error(`no broken values for ${JSON.stringify(schema)}`);
  }
}

// ── The example ─────────────────────────────────────────────────────────────────────────────────

test('the OpenAPI example passes Ajv and the cross-field checks', () => {
  assert.deepEqual(schemaErrors(POLICY_INPUT_EXAMPLE), []);
  assert.deepEqual(validatePolicyInput(POLICY_INPUT_EXAMPLE), []);
  assert.deepEqual((PolicyInputSchema as unknown as { examples: unknown[] }).examples, [
    POLICY_INPUT_EXAMPLE,
  ]);
});

test('the example is complete: it has every field but the alias and the service-set ones', () => {
  const notInExample = new Set([
    'effective_date',
    'backfill',
    'policy/created_at',
    'policy/policy_reference',
    'proposer/mobile_number',
    'additional_drivers/0/mobile_number',
    // A payment block names an intent confirmed moments before: no fixed example can bind with one.
    'payment',
    'payment/provider_payment_reference',
    'payment/payment_method_id',
    'payment/provider_customer_reference',
    'payment/payment_provider',
    'payment/payment_amount',
  ]);
  const missing = fields(inputSchema)
    .map((f) => f.path)
    // Fields of drivers repeat the proposer's; the example's driver has the essentials only.
    .filter(
      (p) =>
        !(
          p[0] === 'additional_drivers' &&
          p.length > 2 &&
          ['children', 'has_informed_dvla_medical_conditions', 'own_home'].includes(p[2] ?? '')
        ),
    )
    .filter((p) => !(p.at(-1) === '0' && p.at(-2) === 'modifications'))
    .filter(
      (p) =>
        !(p[0] === 'additional_drivers' && (p[2] === 'convictions' || p[2] === 'claims') && p.length > 3),
    )
    .map((p) => p.join('/'))
    .filter((p) => !notInExample.has(p))
    .filter(
      (p) =>
        p
          .split('/')
          .reduce<unknown>(
            (node, key) => (node as Record<string, unknown> | undefined)?.[key],
            POLICY_INPUT_EXAMPLE,
          ) === undefined,
    );
  assert.deepEqual(missing, []);
});

test('the example is frozen, and examplePolicyInput hands out independent deep-merged copies', () => {
  assert.ok(Object.isFrozen(POLICY_INPUT_EXAMPLE.policy.address));
  const a = examplePolicyInput({
    proposer: { email: 'someone.else@example.org' },
    policy: { address: { postcode: 'M1 1AE' } },
  });
  assert.equal(a.proposer.email, 'someone.else@example.org');
  assert.equal(a.proposer.first_names, POLICY_INPUT_EXAMPLE.proposer.first_names);
  assert.equal(a.policy.address.postcode, 'M1 1AE');
  assert.equal(a.policy.address.line_1, POLICY_INPUT_EXAMPLE.policy.address.line_1);
  a.vehicle.reg = 'CHANGED';
  assert.equal(examplePolicyInput().vehicle.reg, POLICY_INPUT_EXAMPLE.vehicle.reg);
  const removed = examplePolicyInput({ vehicle: { reg: undefined }, payment: undefined });
  assert.equal('reg' in removed.vehicle, false);
  assert.equal('payment' in removed, false);
  assert.deepEqual(examplePolicyInput({ additional_drivers: [] }).additional_drivers, []);
});

// ── The interface's fields ──────────────────────────────────────────────────────────────────────

test('every field of the interface’s policy object is in the schema, under its exact name', () => {
  const interfaceFields = {
    '': ['policy', 'proposer', 'vehicle', 'additional_drivers', 'pricing', 'custom', 'payment'],
    policy: [
      'compulsory_excess',
      'voluntary_excess',
      'address',
      'usage',
      'cover',
      'auto_renew',
      'start_date',
      'end_date',
      'inception_date',
      'billing_day_date',
      'underwriter_reference',
      'underwriter_policy_reference',
      'product_reference',
      'policy_year',
      'subscription_frequency',
      'created_at',
      'policy_reference',
    ],
    'policy/address': ['line_1', 'line_2', 'line_3', 'county', 'city', 'country', 'postcode'],
    proposer: [
      'title',
      'first_names',
      'last_names',
      'email',
      'phone_number',
      'children',
      'has_medical_conditions',
      'has_informed_dvla_medical_conditions',
      'ncd',
      'dob',
      'licence_type',
      'employment',
      'occupation',
      'business',
      'licence_issued_date',
      'residency_date',
      'has_criminal_conviction',
      'convictions',
      'claims',
      'own_home',
    ],
    'proposer/convictions/0': ['code', 'date', 'points', 'ban'],
    'proposer/claims/0': ['code', 'date', 'at_fault', 'ncd_lost'],
    vehicle: [
      'reg',
      'vin',
      'make',
      'model',
      'colour',
      'type',
      'body_type',
      'rating',
      'group_rating_50',
      'group_rating_20',
      'abi_code',
      'engine',
      'fuel',
      'owner',
      'keeper',
      'estimated_yearly_mileage',
      'purchase_date',
      'manufacture_date',
      'current_value',
      'is_rhd',
      'is_parked_home',
      'is_import',
      'seats',
      'doors',
      'overnight_postcode',
      'parked_location',
      'modifications',
    ],
    pricing: [
      'quote_reference',
      'quote_version_reference',
      'quote_model_reference',
      'upfront_rate',
      'subscription_rate',
      'usage_rate',
      'subscription_installments',
      'upfront_premium',
      'subscription_premium',
      'usage_premium',
      'base_premium',
      'yearly_premium_estimate',
      'total_excess',
      'estimated_distance',
      'withhold_fee',
      'deposit_fee',
      'admin_fee',
      'mta_fee',
      'cancel_fee',
      'ipt_rate',
      'commission_rate',
    ],
    payment: [
      'provider_payment_reference',
      'payment_method_id',
      'provider_customer_reference',
      'payment_provider',
      'payment_amount',
    ],
  } as const;
  const known = new Set(fields(inputSchema).map((f) => f.path.join('/')));
  for (const [block, names] of Object.entries(interfaceFields)) {
    for (const name of names)
      assert.ok(known.has(block === '' ? name : `${block}/${name}`), `${block}/${name} is missing`);
  }
  // A driver has the proposer's fields plus relationship, and mobile_number as an alias.
  for (const name of [...interfaceFields.proposer, 'relationship', 'mobile_number'])
    assert.ok(known.has(`additional_drivers/0/${name}`), name);
  // Beyond the interface: the top-level effective_date, the alias, and one extension.
  const interfaceNames = new Set(
    Object.entries(interfaceFields).flatMap(([block, names]) =>
      names.map((n) => (block === '' ? n : `${block}/${n}`)),
    ),
  );
  const extras = [...known].filter(
    (p) => !interfaceNames.has(p) && !p.startsWith('additional_drivers/') && !p.endsWith('modifications/0'),
  );
  assert.deepEqual(extras.sort(), [
    'backfill',
    'effective_date',
    'pricing/usage_unit',
    'proposer/mobile_number',
  ]);
});

test('every field has a description for the OpenAPI document', () => {
  const undocumented = fields(inputSchema)
    .filter((f) => f.schema.description === undefined && f.path.at(-1) !== '0')
    .map((f) => f.path.join('/'));
  assert.deepEqual(undocumented, []);
});

// ── Broken values ───────────────────────────────────────────────────────────────────────────────

test('a broken value in any field is reported at that field’s path', () => {
  const all = fields(inputSchema);
  assert.ok(all.length > 140, `only ${all.length} fields found`);
  let checked = 0;
  for (const field of all) {
    for (const value of brokenValues(field.schema)) {
      const errors = schemaErrors(withValue(POLICY_INPUT_EXAMPLE, field.path, value));
      assert.ok(
        errors.some((e) => e.path === pointer(field.path)),
        `${pointer(field.path)} = ${JSON.stringify(value)} gave ${JSON.stringify(errors)}`,
      );
      checked += 1;
    }
  }
  assert.ok(checked > 500);
});

test('realistic mistakes are reported with readable messages', () => {
  const cases: [path: string, value: unknown, message: string][] = [
    ['policy/start_date', '2025-06-01', 'must be integer'],
    ['policy/start_date', 1_748_732_400.5, 'must be integer'],
    ['policy/end_date', 4_102_444_801, 'must be <= 4102444800'],
    ['policy/end_date', -1, 'must be >= 0'],
    ['policy/billing_day_date', 32, 'must be <= 31'],
    ['policy/billing_day_date', 0, 'must be >= 1'],
    ['policy/compulsory_excess', -250, 'must be >= 0'],
    ['policy/auto_renew', 'yes', 'must be boolean'],
    ['policy/address/country', 'GBR', 'must match pattern "^[A-Za-z]{2}$"'],
    ['policy/address/postcode', '', 'must NOT have fewer than 1 characters'],
    ['proposer/email', 'amelia.clarke@', 'must match format "email"'],
    ['proposer/email', 'amelia clarke@example.com', 'must match format "email"'],
    ['proposer/phone_number', '07700 900123', 'must match pattern "^\\+[1-9]\\d{6,14}$"'],
    ['proposer/phone_number', '+44 7700 900123', 'must match pattern "^\\+[1-9]\\d{6,14}$"'],
    ['proposer/mobile_number', '+0123456789', 'must match pattern "^\\+[1-9]\\d{6,14}$"'],
    ['proposer/dob', '14/03/1988', 'must match pattern "^[1-9]\\d{3}-\\d{2}-\\d{2}$"'],
    ['proposer/ncd', '4', 'must be integer'],
    ['proposer/convictions/0/points', -3, 'must be >= 0'],
    ['proposer/claims/0/at_fault', 'no', 'must be boolean'],
    ['vehicle/engine', 1498.5, 'must be integer'],
    ['vehicle/modifications', 'spoiler', 'must be array'],
    ['vehicle/modifications/0', '', 'must NOT have fewer than 1 characters'],
    ['pricing/usage_rate', '0.045', 'must be number'],
    ['pricing/usage_rate', -0.01, 'must be >= 0'],
    ['pricing/upfront_premium', -95.5, 'must be >= 0'],
    ['pricing/ipt_rate', 112, 'must be <= 100'],
    ['pricing/quote_reference', 'Q-2025-0001', 'must match format "uuid"'],
    ['pricing/usage_unit', 'miles', 'must be equal to one of the allowed values'],
    ['payment/payment_provider', 'Stripe', 'must match pattern "^[a-z][a-z0-9_-]*$"'],
    ['payment/payment_amount', '95.50', 'must be number'],
    ['custom/notes', 'x'.repeat(501), 'must NOT have more than 500 characters'],
    ['custom/nested', { a: 1 }, 'must be string'],
    ['effective_date', '2025-07-01', 'must be integer'],
  ];
  for (const [path, value, message] of cases) {
    const segments = path.split('/');
    const errors = schemaErrors(withValue(POLICY_INPUT_EXAMPLE, segments, value));
    assert.ok(
      errors.some((e) => e.path === pointer(segments) && e.message === message),
      `${path} = ${JSON.stringify(value)}: expected "${message}", got ${JSON.stringify(errors)}`,
    );
  }
});

test('custom holds at most 25 scalar items', () => {
  const full = Object.fromEntries(
    Array.from({ length: CUSTOM_MAX_ITEMS }, (_, i) => [`key_${i}`, i % 2 === 0 ? `v${i}` : i]),
  );
  // Set whole (examplePolicyInput would merge these into the example's own custom items).
  assert.deepEqual(schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['custom'], full)), []);
  assert.deepEqual(
    schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['custom'], { a: null, b: true, c: 1.5, d: '' })),
    [],
  );
  const errors = schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['custom'], { ...full, one_more: 1 }));
  assert.deepEqual(errors, [{ path: '/body/custom', message: 'must NOT have more than 25 properties' }]);
  assert.ok(
    schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['custom', 'list'], [1])).some(
      (e) => e.path === '/body/custom/list',
    ),
  );
  // A key holding a line break is still checked (TypeBox's Record pattern `^.*$` would skip it).
  assert.ok(
    schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['custom', 'two\nlines'], { a: 1 })).some(
      (e) => e.path === '/body/custom/two\nlines',
    ),
  );
});

// ── Required and unknown fields ─────────────────────────────────────────────────────────────────

test('each required field, when missing, is reported by name', () => {
  const required: string[][] = [];
  const collect = (schema: JsonSchema, path: string[]) => {
    for (const name of schema.required ?? []) required.push([...path, name]);
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (child.properties !== undefined) collect(child, [...path, key]);
      if (child.items?.properties !== undefined) collect(child.items, [...path, key, '0']);
    }
  };
  collect(inputSchema, []);
  assert.deepEqual(
    required.map((p) => p.join('/')).sort(),
    [
      'additional_drivers/0/claims/0/code',
      'additional_drivers/0/claims/0/date',
      'additional_drivers/0/convictions/0/code',
      'additional_drivers/0/convictions/0/date',
      'additional_drivers/0/dob',
      'additional_drivers/0/first_names',
      'additional_drivers/0/last_names',
      'policy',
      'policy/address',
      'policy/address/line_1',
      'policy/address/postcode',
      'policy/cover',
      'policy/end_date',
      'policy/start_date',
      'policy/usage',
      'pricing',
      'pricing/subscription_premium',
      'pricing/upfront_premium',
      'pricing/usage_rate',
      'proposer',
      'proposer/claims/0/code',
      'proposer/claims/0/date',
      'proposer/convictions/0/code',
      'proposer/convictions/0/date',
      'proposer/dob',
      'proposer/email',
      'proposer/first_names',
      'proposer/last_names',
      'vehicle',
      'vehicle/make',
      'vehicle/model',
      'vehicle/reg',
    ].sort(),
  );
  assert.deepEqual(schemaErrors(FULL_BODY), []);
  for (const path of required) {
    const errors = schemaErrors(without(FULL_BODY, path));
    assert.ok(
      errors.some((e) => e.path === pointer(path) && e.message === 'is required'),
      `${path.join('/')}: ${JSON.stringify(errors)}`,
    );
  }
});

test('a minimal bindable policy (required fields only) is accepted', () => {
  const minimal = {
    policy: {
      address: { line_1: '1 High Street', postcode: 'LS1 4AP' },
      usage: 'sdp',
      cover: 'comprehensive',
      start_date: 1_748_732_400,
      end_date: 1_780_268_399,
    },
    proposer: {
      first_names: 'Noah',
      last_names: 'Patel',
      email: 'noah.patel@example.com',
      dob: '1990-01-31',
    },
    vehicle: { reg: 'YX70 ABC', make: 'Toyota', model: 'Yaris' },
    pricing: { usage_rate: 0.05, upfront_premium: 0, subscription_premium: 19.99 },
  };
  assert.deepEqual(schemaErrors(minimal), []);
  assert.deepEqual(validatePolicyInput(minimal), []);
});

test('Ajv fills the documented defaults: country GB and usage_unit mile', () => {
  const body = examplePolicyInput({
    policy: { address: { country: undefined } },
    pricing: { usage_unit: undefined },
  });
  assert.equal(validatePolicyInputSchema(body), true);
  assert.equal(body.policy.address.country, 'GB');
  assert.equal(body.pricing.usage_unit, 'mile');
});

test('an unknown field is rejected by name at every level', () => {
  const objects = closedObjects(inputSchema);
  assert.equal(objects.length, 12);
  for (const path of objects) {
    const errors = schemaErrors(withValue(FULL_BODY, [...path, 'colour_of_socks'], 'red'));
    assert.deepEqual(
      errors,
      [{ path: pointer([...path, 'colour_of_socks']), message: 'is not a known field' }],
      path.join('/'),
    );
  }
  // Legacy names are not aliases (only mobile_number is).
  assert.deepEqual(schemaErrors(withValue(POLICY_INPUT_EXAMPLE, ['policy', 'policy_ref'], 'x')), [
    { path: '/body/policy/policy_ref', message: 'is not a known field' },
  ]);
});

test('mobile_number is accepted as an alias of phone_number on the proposer and on drivers', () => {
  const body = examplePolicyInput({
    proposer: { phone_number: undefined, mobile_number: '+447700900999' },
    additional_drivers: [
      {
        first_names: 'Ava',
        last_names: 'Clarke',
        dob: '2001-02-03',
        mobile_number: '+447700900888',
        relationship: 'child',
      },
    ],
  });
  assert.deepEqual(schemaErrors(body), []);
  assert.deepEqual(validatePolicyInput(body), []);
});

test('many errors are listed together, not just the first', () => {
  const body = structuredClone(POLICY_INPUT_EXAMPLE) as unknown as Record<string, Record<string, unknown>>;
  const proposer = body['proposer'] ?? {};
  const pricing = body['pricing'] ?? {};
  const policy = body['policy'] ?? {};
  Reflect.deleteProperty(proposer, 'email');
  proposer['phone_number'] = '07700900123';
  pricing['usage_rate'] = 'four pence';
  pricing['upfront_premium'] = -1;
  policy['start_date'] = '2025-06-01';
  body['vehicle'] = { ...body['vehicle'], sunroof: true };
  const errors = schemaErrors(body);
  assert.deepEqual(errors.map((e) => e.path).sort(), [
    '/body/policy/start_date',
    '/body/pricing/upfront_premium',
    '/body/pricing/usage_rate',
    '/body/proposer/email',
    '/body/proposer/phone_number',
    '/body/vehicle/sunroof',
  ]);
});

test('a body that is not an object is one error at /body', () => {
  for (const body of [null, 'policy', 42, []]) {
    assert.deepEqual(schemaErrors(body), [{ path: '/body', message: 'must be object' }]);
  }
});

test('the schemas compile without Ajv strict-mode warnings', () => {
  const warn = mock.method(console, 'warn', () => undefined);
  const log = mock.method(console, 'log', () => undefined);
  try {
    const compile = AjvCompiler()(
      {},
      {
        customOptions: {
          removeAdditional: false,
          allErrors: true,
          useDefaults: true,
          coerceTypes: false,
          strict: 'log',
        },
      },
    ) as unknown as (route: { schema: unknown }) => unknown;
    compile({ schema: PolicyInputSchema });
    compile({ schema: PolicyResponseSchema });
    assert.equal(warn.mock.callCount(), 0, JSON.stringify(warn.mock.calls.map((c) => c.arguments)));
    assert.equal(log.mock.callCount(), 0);
  } finally {
    warn.mock.restore();
    log.mock.restore();
  }
});

// ── Responses ───────────────────────────────────────────────────────────────────────────────────

const nbVersion: PolicyVersion = {
  version_type: 'nb',
  policy_reference: 'amber-falcon-river',
  policy_version_reference: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  quote_reference: POLICY_INPUT_EXAMPLE.pricing.quote_reference ?? null,
  usage: 'sdp_commuting',
  vehicle_reg: 'AB12 CDE',
  address_postcode: 'EC1A 1BB',
  email: 'amelia.clarke@example.com',
  proposer_first_names: 'Amelia Rose',
  proposer_last_names: 'Clarke',
  inception_date: '2025-05-31T23:00:00.000Z',
  effective_date: '2025-05-31T23:00:00.000Z',
  start_date: '2025-05-31T23:00:00.000Z',
  end_date: '2026-05-31T22:59:59.000Z',
  upfront_rate: 0.25,
  subscription_rate: 0.35,
  usage_rate: 0.045,
  upfront_premium: 95.5,
  subscription_premium: 29.99,
  usage_premium: 270,
  ipt_rate: 12,
  commission_rate: 15,
  statement_start_date: null,
  statement_end_date: null,
  created_at: '2025-05-20T10:15:00.000Z',
  superseded: false,
};

const stVersion: PolicyVersion = {
  ...nbVersion,
  version_type: 'st',
  policy_version_reference: '7b2e3d4f-5a6b-4c7d-9e8f-0a1b2c3d4e5f',
  quote_reference: null,
  inception_date: null,
  upfront_rate: null,
  subscription_rate: null,
  usage_premium: 12.34,
  ipt_rate: null,
  commission_rate: null,
  effective_date: '2025-06-30T22:59:59.000Z',
  statement_start_date: '2025-05-31T23:00:00.000Z',
  statement_end_date: '2025-06-30T22:59:59.000Z',
  created_at: '2025-07-01T01:00:03.000Z',
};

function storedPolicy(): PolicyResponse {
  const stored = normalisePolicyInput(POLICY_INPUT_EXAMPLE);
  return {
    policy_reference: 'amber-falcon-river',
    policy_version_reference: stVersion.policy_version_reference,
    user_reference: 'usr_8fK2mQ4x',
    status: 'active',
    product: null,
    ...stored,
    policy: {
      ...stored.policy,
      policy_reference: 'amber-falcon-river',
      policy_ref: 'amber-falcon-river',
      created_at: 1_747_736_100,
    },
    additional_drivers: [
      {
        ...(stored.additional_drivers?.[0] ?? { first_names: 'x', last_names: 'y', dob: '2000-01-01' }),
        mobile_number: '+447700900456',
      },
    ],
    renewal: {
      start_date: 1_780_268_400,
      end_date: 1_811_804_399,
      policy_year: 2,
      policy_version_reference: null,
      automatic: true,
      pricing: stored.pricing,
    },
    versions: [nbVersion, stVersion],
    payments: [],
  };
}

test('the response schema serialises every field the service returns (nothing dropped by the serializer)', async () => {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
  const body = storedPolicy();
  app.get('/policys/:ref', { schema: { response: { 200: PolicyResponseSchema } } }, async () => body);
  const response = await app.inject({ method: 'GET', url: '/policys/amber-falcon-river' });
  assert.equal(response.statusCode, 200);
  assert.deepEqual(response.json(), JSON.parse(JSON.stringify(body)));
  await app.close();
});

test('each version field is required in the response, nullable only where it can be unknown', () => {
  const schema = PolicyVersionSchema as unknown as JsonSchema;
  const names = Object.keys(schema.properties ?? {});
  assert.deepEqual([...(schema.required ?? [])].sort(), [...names].sort());
  const nullable = names
    .filter((n) => schema.properties?.[n]?.anyOf?.some((s) => s.type === 'null') === true)
    .sort();
  assert.deepEqual(nullable, [
    'commission_rate',
    'inception_date',
    'ipt_rate',
    'quote_reference',
    'statement_end_date',
    'statement_start_date',
    'subscription_rate',
    'upfront_rate',
    'usage_premium',
  ]);
  assert.deepEqual(schema.properties?.['version_type']?.enum, ['nb', 'mta', 'st', 'cn', 'rn', 'ls']);
});
