import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Type, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { MOCKED_ROUTES } from '../../../src/modules/demo/index.ts';
import { demoAccount, demoBudget, demoDevice, demoPayments } from '../../../src/modules/demo/mock-billing.ts';
import { ClaimListSchema, ClaimSchema } from '../../../src/modules/claims/claim-schemas.ts';
import { MOCK_POLICY_REFERENCE } from '../../../src/modules/demo/mock-data.ts';
import { JourneyListSchema, JourneySchema } from '../../../src/modules/journeys/journey-schemas.ts';
import { PaymentRecordSchema } from '../../../src/modules/policies/policy-schemas.ts';
import { StatementSchema } from '../../../src/modules/statements/statement-schemas.ts';
import { DeviceListSchema, DeviceSchema } from '../../../src/modules/telematics/telematics-schemas.ts';
import { MileageBudgetSchema } from '../../../src/modules/usage/usage-schemas.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem } from '../auth/auth-support.ts';

/*
 * The web app's pages in the `mock` environment (`/app/?demo`): every route the pages read answers the
 * demo account, shaped by the route's own schema, for any Authorization or none, never reading or
 * writing a tenant's data; bad input still answers the route's 4xx.
 */

let t: TestApp;
let off: TestApp;
let company: Awaited<ReturnType<typeof createCompany>>;
let realPolicy: string;

before(async () => {
  t = await createTestApp();
  off = await createTestApp({ env: { MOCK_ENVIRONMENT: 'off' } });
  company = await createCompany(t.app);
  realPolicy = (await make.livePolicy(t.app, company)).reference;
});
after(async () => {
  await t.close();
  await off.close();
});

const context = {
  Journey: JourneySchema,
  Device: DeviceSchema,
  MileageBudget: MileageBudgetSchema,
  Claim: ClaimSchema,
};
const StatementListSchema = Type.Object({
  statements: Type.Array(StatementSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
const PaymentListSchema = Type.Object({ payments: Type.Array(PaymentRecordSchema) });

function assertValid(schema: TSchema, value: unknown, label: string): void {
  const errors = [...Value.Errors(context, schema, value)].map((e) => `${e.instancePath} ${e.message}`);
  assert.deepEqual(errors, [], `${label} validates`);
}

/** Rows of every table of the service: the mock environment must leave them all as they were. */
async function rowCounts(app: TestApp): Promise<Record<string, number>> {
  const db = app.container.database.db;
  const tables = await sql<{ tablename: string }>`
    select tablename from pg_tables where schemaname = 'public' order by tablename`.execute(db);
  const counts: Record<string, number> = {};
  for (const { tablename } of tables.rows) {
    const row = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(tablename)}`.execute(db);
    counts[tablename] = Number(row.rows[0]?.n);
  }
  return counts;
}

async function mockToken(): Promise<string> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { environment: 'mock' },
    payload: { type: 'USER_PASSWORD_AUTH', username: 'demo', password: 'demo' },
  });
  return r.json<{ access_token: string }>().access_token;
}

const policy = MOCK_POLICY_REFERENCE;

describe('the app’s pages in the mock environment', () => {
  test('every mocked route answers 200 with a body valid by its schema, with any Authorization or none, and writes nothing', async () => {
    const account = demoAccount(policy, new Date());
    const statement = account.statements[0]!.view.policy_version_reference;
    const journey = account.journeys[0]!.journey_reference;
    const calls: Array<{
      route: string;
      url: string;
      method?: 'POST' | 'PUT';
      payload?: object;
      schema: TSchema;
    }> = [
      { route: 'GET /journeys', url: '/journeys', schema: JourneyListSchema },
      {
        route: 'GET /journeys',
        url: `/journeys?policy_reference=${policy}&limit=500`,
        schema: JourneyListSchema,
      },
      { route: 'GET /journeys/:journey_reference', url: `/journeys/${journey}`, schema: Type.Ref('Journey') },
      {
        route: 'GET /statements',
        url: `/statements?policy_reference=${policy}`,
        schema: StatementListSchema,
      },
      {
        route: 'GET /statements/:policy_version_reference',
        url: `/statements/${statement}`,
        schema: StatementSchema,
      },
      { route: 'GET /payments', url: `/payments?policy_reference=${policy}`, schema: PaymentListSchema },
      {
        route: 'POST /payments',
        url: '/payments',
        method: 'POST',
        payload: {
          type: 'GET_PAYMENT_METHOD',
          product_reference: 'pay-by-mile-car',
          policy_reference: policy,
        },
        schema: Type.Object({}),
      },
      {
        route: 'GET /policys/:policy_reference/mileage-budget',
        url: `/policys/${policy}/mileage-budget`,
        schema: MileageBudgetSchema,
      },
      {
        route: 'PUT /policys/:policy_reference/mileage-budget',
        url: `/policys/${policy}/mileage-budget`,
        method: 'PUT',
        payload: { distance_per_month: 250 },
        schema: MileageBudgetSchema,
      },
      { route: 'GET /devices', url: `/devices?policy_reference=${policy}`, schema: DeviceListSchema },
      { route: 'GET /devices/:device_id', url: '/devices/obd-356938035643809', schema: DeviceSchema },
      {
        route: 'GET /policys/:policy_reference/claims',
        url: `/policys/${policy}/claims`,
        schema: ClaimListSchema,
      },
    ];
    assert.deepEqual(
      new Set(calls.map((c) => c.route)),
      new Set(MOCKED_ROUTES),
      'every mocked route is called here',
    );
    const authorisations: Array<[string, Record<string, string>]> = [
      ['no Authorization', {}],
      ['a mock token', { authorization: `Bearer ${await mockToken()}` }],
      ['junk', { authorization: 'Bearer undefined' }],
      [
        'a real company’s credentials',
        { client_id: company.client_id, client_secret: company.client_secret_sandbox },
      ],
    ];
    const counts = await rowCounts(t);
    for (const [label, headers] of authorisations)
      for (const call of calls) {
        const r = await t.app.inject({
          method: call.method ?? 'GET',
          url: call.url,
          headers: { ...headers, environment: 'mock' },
          ...(call.payload === undefined ? {} : { payload: call.payload }),
        });
        assert.equal(r.statusCode, 200, `${call.method ?? 'GET'} ${call.url} with ${label}: ${r.body}`);
        assertValid(call.schema, r.json(), `${call.url} with ${label}`);
      }
    assert.deepEqual(await rowCounts(t), counts, 'nothing read into or written to any table');
  });

  test('the pages agree: policy versions, statements, journeys, payments, card, device and budget', async () => {
    const mock = { environment: 'mock' };
    const get = async <T>(url: string): Promise<T> => {
      const r = await t.app.inject({ url, headers: mock });
      assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      return r.json<T>();
    };
    const details = await get<{
      versions: Array<{ version_type: string; policy_version_reference: string }>;
    }>('/policys/details');
    const { statements } = await get<{ statements: Array<Record<string, unknown>> }>(
      `/statements?policy_reference=${policy}`,
    );
    assert.equal(statements.length, 2, 'two monthly statements, newest first');
    assert.deepEqual(
      details.versions.filter((v) => v.version_type === 'st').map((v) => v.policy_version_reference),
      statements.map((s) => s['policy_version_reference']).toReversed(),
      'each statement is an st version of the policy',
    );
    const [latest, earlier] = statements as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual(latest['payment'], {
      payment_amount: null,
      error_message: 'Your card has insufficient funds.',
    });
    assert.equal(latest['current'], true);
    assert.ok((latest['capped_days'] as unknown[]).length === 1, 'a capped day');
    assert.ok((latest['cap_credit'] as number) > 0);
    for (const s of statements) {
      assert.ok((s['free_distance_credit'] as number) > 0, 'free distance credited');
      assert.ok((s['credits_used'] as number) > 0, 'a goodwill credit used');
      assert.equal(s['journey_count'], (s['journeys'] as unknown[]).length);
    }
    assert.deepEqual(earlier['payment'], { payment_amount: earlier['billed_premium'] });

    const journeys: Array<Record<string, unknown>> = [];
    let cursor: string | null = null;
    do {
      const page: { journeys: Array<Record<string, unknown>>; next_cursor: string | null } = await get(
        `/journeys?limit=50${cursor === null ? '' : `&after=${cursor}`}`,
      );
      journeys.push(...page.journeys);
      cursor = page.next_cursor;
    } while (cursor !== null);
    assert.ok(journeys.length > 60, 'weeks of journeys, paged');
    assert.equal(journeys.filter((j) => j['is_void']).length, 1, 'one void journey');
    assert.equal(journeys.filter((j) => j['is_estimated']).length, 1, 'one estimated day');
    assert.ok(journeys.every((j) => j['is_estimated'] === true || (j['route'] as string).length > 10));
    assert.ok(journeys.some((j) => j['start_name'] === 'Canary Wharf'));
    const billed = new Set(
      statements.flatMap((s) =>
        (s['journeys'] as Array<{ journey_reference: string }>).map((j) => j.journey_reference),
      ),
    );
    for (const j of journeys)
      assert.equal(
        billed.has(j['journey_reference'] as string),
        j['statement_version_reference'] !== null,
        'a journey names the statement that billed it',
      );

    const payments = await get<{ payments: Array<{ status: string; policy_version_reference: string }> }>(
      `/payments?policy_reference=${policy}`,
    );
    assert.deepEqual(
      payments.payments.map((p) => p.status),
      ['succeeded', 'succeeded', 'failed'],
    );
    const card = await t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: mock,
      payload: { type: 'GET_PAYMENT_METHOD', product_reference: 'p', policy_reference: policy },
    });
    assert.equal(card.json<{ last4: string; brand: string }>().last4, '4242');
    assert.equal(card.json<{ brand: string }>().brand, 'visa');

    const devices = await get<{ devices: Array<{ kind: string; status: string; last_seen_at: string }> }>(
      `/devices?policy_reference=${policy}`,
    );
    const device = devices.devices.at(0);
    assert.equal(device?.kind, 'obd');
    assert.ok(Date.now() - Date.parse(device.last_seen_at) < 2 * 86_400_000, 'seen recently');

    const budget = await get<{ distance_per_month: number }>(`/policys/${policy}/mileage-budget`);
    assert.equal(budget.distance_per_month, 400);
  });

  test('writes answer as they would succeed and store nothing', async () => {
    const counts = await rowCounts(t);
    const failed = demoAccount(policy, new Date()).statements.at(-1)!.view;
    const send = (method: 'POST' | 'PUT', url: string, payload: object) =>
      t.app.inject({ method, url, headers: { environment: 'mock' }, payload });
    const card = await send('POST', '/payments', {
      type: 'ADD_NEW_PAYMENT_METHOD',
      product_reference: 'p',
      policy_reference: policy,
      payment_method_id: 'pm_card_mastercard',
    });
    assert.deepEqual(card.json(), {
      type: 'ADD_NEW_PAYMENT_METHOD',
      payment_method_id: 'pm_card_mastercard',
    });
    const retry = await send('POST', '/payments', {
      type: 'RETRY_PAYMENT',
      product_reference: 'p',
      policy_reference: policy,
      policy_version_reference: failed.policy_version_reference,
    });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json<{ payment_amount: number }>().payment_amount, failed.billed_premium);
    const budget = await send('PUT', `/policys/${policy}/mileage-budget`, { distance_per_month: 250 });
    assert.equal(budget.json<{ distance_per_month: number }>().distance_per_month, 250);
    const again = await t.app.inject({
      url: `/policys/${policy}/mileage-budget`,
      headers: { environment: 'mock' },
    });
    assert.equal(again.json<{ distance_per_month: number }>().distance_per_month, 400, 'nothing saved');
    assert.deepEqual(await rowCounts(t), counts);
  });

  test('bad input still answers the route’s 4xx; other policies (a real one too) are not found', async () => {
    const mock = { environment: 'mock' };
    const get = (url: string) => t.app.inject({ url, headers: mock });
    const paid = demoAccount(policy, new Date()).statements[0]!.view.policy_version_reference;
    assertProblem(await get('/statements'), 422, 'VALIDATION_FAILED');
    assertProblem(await get('/journeys?limit=0'), 422, 'VALIDATION_FAILED');
    assertProblem(await get('/journeys?after=nope'), 422, 'VALIDATION_FAILED');
    assertProblem(await get('/statements/not-a-uuid'), 422, 'VALIDATION_FAILED');
    assertProblem(await get('/devices?limit=9999'), 422, 'VALIDATION_FAILED');
    assertProblem(await get(`/journeys/${paid}`), 404, 'NOT_FOUND');
    for (const other of ['someone-elses-policy', realPolicy]) {
      assertProblem(await get(`/statements?policy_reference=${other}`), 404, 'NOT_FOUND');
      assertProblem(await get(`/journeys?policy_reference=${other}`), 404, 'NOT_FOUND');
      assertProblem(await get(`/policys/${other}/mileage-budget`), 404, 'NOT_FOUND');
      assertProblem(await get(`/devices?policy_reference=${other}`), 404, 'NOT_FOUND');
      assertProblem(await get(`/policys/${other}/claims`), 404, 'NOT_FOUND');
    }
    const post = (payload: object, status: number, code: string) =>
      t.app.inject({ method: 'POST', url: '/payments', headers: mock, payload }).then((r) => {
        assertProblem(r, status, code);
      });
    await post({ type: 'GET_PAYMENT_METHOD', policy_reference: policy }, 422, 'VALIDATION_FAILED');
    await post({ type: 'GET_PAYMENT_METHOD', product_reference: 'p' }, 422, 'VALIDATION_FAILED');
    await post(
      { type: 'ADD_NEW_PAYMENT_METHOD', product_reference: 'p', policy_reference: policy },
      422,
      'VALIDATION_FAILED',
    );
    await post(
      {
        type: 'RETRY_PAYMENT',
        product_reference: 'p',
        policy_reference: policy,
        policy_version_reference: paid,
      },
      409,
      'ALREADY_PAID',
    );
    // Not a page of the app: the route refuses the mock environment as before.
    await post(
      { type: 'CREATE_PAYMENT_INTENT', product_reference: 'p', amount: 100 },
      422,
      'VALIDATION_FAILED',
    );
    assertProblem(
      await t.app.inject({
        method: 'PUT',
        url: `/policys/${policy}/mileage-budget`,
        headers: mock,
        payload: { distance_per_month: -1 },
      }),
      422,
      'VALIDATION_FAILED',
    );
  });

  test('with MOCK_ENVIRONMENT=off, environment: mock is refused on the pages’ routes', async () => {
    for (const url of [
      '/journeys',
      `/statements?policy_reference=${policy}`,
      `/devices?policy_reference=${policy}`,
    ])
      assertProblem(
        await off.app.inject({ url, headers: { environment: 'mock' } }),
        422,
        'VALIDATION_FAILED',
      );
  });
});

describe('the demo account on any day of the year', () => {
  test('validates by the schemas and bills by the product’s rules', () => {
    for (let month = 0; month < 12; month++)
      for (const day of [1, 9, 28]) {
        const now = new Date(Date.UTC(2027, month, day, month % 2 === 0 ? 6 : 21, 30));
        const label = now.toISOString();
        const account = demoAccount(policy, now);
        assertValid(Type.Array(JourneySchema), account.journeys, `${label} journeys`);
        assertValid(
          Type.Array(StatementSchema),
          account.statements.map((s) => s.view),
          `${label} statements`,
        );
        assertValid(PaymentListSchema, { payments: demoPayments(account) }, `${label} payments`);
        assertValid(DeviceSchema, demoDevice(account, now), `${label} device`);
        assertValid(MileageBudgetSchema, demoBudget(account, now), `${label} budget`);
        assert.ok(
          account.journeys.every((j) => j.end_at <= now.getTime() / 1000),
          `${label}: nothing in the future`,
        );
        assert.equal(demoDevice(account, now).status, 'online', `${label}: the device is online`);
        assert.equal(account.journeys.filter((j) => j.is_void).length, 1, `${label}: one void`);
        assert.equal(account.journeys.filter((j) => j.is_estimated).length, 1, `${label}: one estimate`);
        assert.equal(account.statements.at(-1)?.view.capped_days.length, 1, `${label}: a capped day`);
        for (const { view } of account.statements) {
          const pence = (pounds: number) => Math.round(pounds * 100);
          assert.equal(
            pence(view.billed_premium),
            pence(view.total_premium) -
              pence(view.cap_credit) -
              pence(view.free_distance_credit) +
              pence(view.minimum_top_up) -
              pence(view.credits_used),
            `${label}: billed = total − credits`,
          );
          assert.equal(
            pence(view.usage_premium),
            view.journeys.reduce((sum, j) => sum + pence(j.usage_premium), 0),
            `${label}: usage premium = the journeys’`,
          );
        }
      }
  });
});
