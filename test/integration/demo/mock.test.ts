import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TSchema } from 'typebox';
import {
  AdditionalDriverSchema,
  PaymentBlockSchema,
  PricingSchema,
  ProposerSchema,
  StoredPolicyBlockSchema,
  VehicleSchema,
} from '../../../src/modules/policies/policy-schemas.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { assertProblem } from '../auth/auth-support.ts';

let t: TestApp;
let off: TestApp;

before(async () => {
  t = await createTestApp();
  off = await createTestApp({ env: { MOCK_ENVIRONMENT: 'off' } });
});
after(async () => {
  await t.close();
  await off.close();
});

/** Rows in every table a login could write to: the mock environment must leave them all unchanged. */
async function rowCounts(app: TestApp): Promise<Record<string, number>> {
  const tables = [
    'users',
    'policies',
    'outbox_emails',
    'auth_login_sessions',
    'auth_refresh_tokens',
    'auth_reset_codes',
    'auth_throttles',
    'events',
  ] as const;
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const row = await app.container.database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

function assertDone(body: Record<string, unknown>, label: string): void {
  assert.equal(body['type'], 'DONE', label);
  assert.equal(typeof body['access_token'], 'string', label);
  assert.ok((body['access_token'] as string).length > 0, label);
  for (const field of ['username', 'session', 'refresh_token'])
    assert.equal(typeof body[field], 'string', `${label}: ${field}`);
  assert.equal(typeof body['expiry'], 'number', label);
}

describe('POST /auth/token in the mock environment', () => {
  const forms: Array<{ label: string; headers: Record<string, string>; payload?: string }> = [
    {
      label: 'JSON without type',
      headers: { 'content-type': 'application/json' },
      payload: '{"username":"sam","password":"x"}',
    },
    {
      label: 'form-encoded',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=sam&password=x',
    },
    {
      label: 'text/json',
      headers: { 'content-type': 'text/json' },
      payload: '{"type":"USER_PASSWORD_AUTH","username":"sam","password":"x"}',
    },
    {
      label: '[object Object] as JSON',
      headers: { 'content-type': 'application/json' },
      payload: '[object Object]',
    },
    {
      label: '[object Object] as text/plain',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      payload: '[object Object]',
    },
    {
      label: 'an unknown content type',
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'x',
    },
    { label: 'no body', headers: {} },
    { label: 'an empty JSON body', headers: { 'content-type': 'application/json' }, payload: '' },
    {
      label: 'Bearer null and a full, valid body',
      headers: { 'content-type': 'application/json', authorization: 'Bearer null' },
      payload: '{"type":"USER_PASSWORD_AUTH","username":"sam","password":"anything"}',
    },
  ];

  for (const form of forms)
    test(`any login answers DONE with tokens: ${form.label}`, async () => {
      const before = await rowCounts(t);
      const r = await t.app.inject({
        method: 'POST',
        url: '/auth/token',
        headers: { Environment: 'Mock', ...form.headers },
        ...(form.payload === undefined ? {} : { payload: form.payload }),
      });
      assert.equal(r.statusCode, 200, `${form.label}: ${r.body}`);
      assert.match(String(r.headers['content-type']), /application\/json/);
      assertDone(r.json(), form.label);
      assert.deepEqual(await rowCounts(t), before, 'nothing persisted');
    });

  test('the username sent comes back; the other steps answer as the real flow would', async () => {
    const send = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/auth/token', headers: { environment: 'mock' }, payload });
    assert.equal(
      (await send({ type: 'USER_PASSWORD_AUTH', username: 'sam', password: 'x' })).json<{
        username: string;
      }>().username,
      'sam',
    );
    assert.deepEqual(
      (
        await send({ type: 'NEW_PASSWORD_REQUIRED', username: 'sam', session: 's', new_password: 'x' })
      ).json(),
      {
        type: 'PASSWORD_RESET',
      },
    );
    assert.deepEqual((await send({ type: 'FORGOT_PASSWORD', username: 'sam' })).json(), {
      type: 'FORGOT_PASSWORD_CODE',
    });
    assertDone((await send({ type: 'REFRESH_TOKEN', refresh_token: 'x' })).json(), 'refresh');
  });
});

/** Every property a schema declares, recursively through objects and arrays of objects, is present and not null. */
function assertFilled(value: unknown, schema: TSchema, path: string): void {
  const s = schema as { type?: string; properties?: Record<string, TSchema>; items?: TSchema };
  if (s.type === 'object' && s.properties !== undefined) {
    assert.ok(typeof value === 'object' && value !== null, `${path} is an object`);
    for (const [key, inner] of Object.entries(s.properties)) {
      const child = (value as Record<string, unknown>)[key];
      assert.ok(child !== undefined && child !== null, `${path}/${key} is filled`);
      assertFilled(child, inner, `${path}/${key}`);
    }
  } else if (s.type === 'array' && s.items !== undefined) {
    assert.ok(Array.isArray(value), `${path} is an array`);
    for (const [k, item] of value.entries()) assertFilled(item, s.items, `${path}/${k}`);
  }
}

function assertNoNulls(value: unknown, path = ''): void {
  assert.notEqual(value, null, `${path} is null`);
  if (typeof value === 'object' && value !== null)
    for (const [key, inner] of Object.entries(value)) assertNoNulls(inner, `${path}/${key}`);
}

describe('GET /policys/details in the mock environment', () => {
  const variants: Array<[string, Record<string, string>]> = [
    ['no Authorization', { environment: 'mock' }],
    ['Bearer undefined', { environment: 'mock', authorization: 'Bearer undefined' }],
    ['a raw token', { environment: 'mock', authorization: 'eyJhbGciOiJub25lIn0.e30.' }],
    ['Environment capitalised', { Environment: 'Mock', authorization: 'Bearer null' }],
    [
      'Content-Type: application/json on a bodiless GET',
      { environment: 'mock', 'content-type': 'application/json' },
    ],
    ['junk headers', { environment: 'mock', ContentType: 'application/json', mode: 'cors' }],
  ];
  for (const [label, headers] of variants)
    test(`200 with the bare demo policy: ${label}`, async () => {
      const r = await t.app.inject({ method: 'GET', url: '/policys/details', headers });
      assert.equal(r.statusCode, 200, `${label}: ${r.body}`);
      const body = r.json<Record<string, unknown>>();
      assert.equal(typeof body['policy'], 'object');
      assert.equal(typeof body['vehicle'], 'object');
    });

  test('every field filled, nothing null, references agree, strings are strings, and it is deterministic', async () => {
    const get = () =>
      t.app.inject({ method: 'GET', url: '/policys/details', headers: { environment: 'mock' } });
    const body = (await get()).json<Record<string, Record<string, unknown>>>();
    assert.deepEqual((await get()).json(), body, 'the same answer twice');
    assertNoNulls(body);
    const policy = body['policy']!;
    const address = policy['address'] as Record<string, unknown>;
    assert.equal(body['policy_reference'], policy['policy_reference']);
    assert.equal(policy['policy_ref'], policy['policy_reference']);
    assert.equal(typeof policy['policy_reference'], 'string');
    const strings: Array<[string, unknown]> = [
      ['policy.cover', policy['cover']],
      ['address.line_1', address['line_1']],
      ['address.line_2', address['line_2']],
      ['address.line_3', address['line_3']],
      ['address.postcode', address['postcode']],
      ['vehicle.make', body['vehicle']!['make']],
      ['vehicle.model', body['vehicle']!['model']],
      ['vehicle.colour', body['vehicle']!['colour']],
      ['vehicle.reg', body['vehicle']!['reg']],
      ['proposer.first_names', body['proposer']!['first_names']],
      ['proposer.last_names', body['proposer']!['last_names']],
    ];
    for (const [name, value] of strings)
      assert.ok(typeof value === 'string' && value !== '', `${name} is a non-empty string`);
    assertFilled(policy, StoredPolicyBlockSchema, '/policy');
    assertFilled(body['proposer'], ProposerSchema, '/proposer');
    assertFilled(body['vehicle'], VehicleSchema, '/vehicle');
    assertFilled(body['pricing'], PricingSchema, '/pricing');
    assertFilled(body['payment'], PaymentBlockSchema, '/payment');
    for (const driver of body['additional_drivers'] as unknown as unknown[])
      assertFilled(driver, AdditionalDriverSchema, '/additional_drivers');
    assert.ok((body['versions'] as unknown as unknown[]).length > 0);
  });

  test('GET /auth/users/:user_reference answers the demo user', async () => {
    const r = await t.app.inject({
      method: 'GET',
      url: '/auth/users/usr_anything',
      headers: { environment: 'mock' },
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json<{ user_reference: string }>().user_reference, 'usr_anything');
  });
});

describe('mock tokens', () => {
  test('are signed with a key of their own (never alg none), which no other environment accepts', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { environment: 'mock' },
      payload: { type: 'USER_PASSWORD_AUTH', username: 'sam', password: 'x' },
    });
    assert.equal(login.statusCode, 200, login.body);
    const token = login.json<{ access_token: string }>().access_token;
    const [header, claims, signature] = token.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(header ?? '', 'base64url').toString()), {
      alg: 'Ed25519',
      typ: 'JWT',
      kid: 'mock',
    });
    const payload = JSON.parse(Buffer.from(claims ?? '', 'base64url').toString()) as { environment: string };
    assert.equal(payload.environment, 'mock');
    assert.equal(Buffer.from(signature ?? '', 'base64url').length, 64);
    // Outside the mock environment the token is checked against the service's keys: refused.
    for (const url of ['/policys/details', '/journeys', '/statements?policy_reference=x'])
      assertProblem(
        await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } }),
        401,
        'INVALID_TOKEN',
      );
    const published = (await t.app.inject({ url: '/.well-known/jwks.json' })).json<{
      keys: Array<{ kid: string }>;
    }>();
    assert.ok(published.keys.every((k) => k.kid !== 'mock'));
  });
});

describe('MOCK_ENVIRONMENT=off', () => {
  test('environment: mock is refused (422) on login and details', async () => {
    const login = await off.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { environment: 'mock' },
      payload: { type: 'USER_PASSWORD_AUTH', username: 'sam', password: 'x' },
    });
    assertProblem(login, 422, 'VALIDATION_FAILED');
    const junk = await off.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { environment: 'mock', 'content-type': 'application/json' },
      payload: '[object Object]',
    });
    // The environment header is refused before the body is read, whatever the body.
    assertProblem(junk, 422, 'VALIDATION_FAILED');
    const details = await off.app.inject({
      method: 'GET',
      url: '/policys/details',
      headers: { environment: 'mock' },
    });
    assertProblem(details, 422, 'VALIDATION_FAILED');
  });
});
