import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { billingRun, createProduct, drive } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { trace } from '../scores/score-support.ts';

// Price by driving score on a real database: the product rule's validation (422 naming each bad field),
// off by default, a month not over or under 50 scored miles left unadjusted, and a month's usage billed
// over two statements adjusted as a whole once the month is over.
interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}
interface ScoreMonth {
  month: string;
  score: number | null;
  adjustment_percent: number;
  usage_premium: number;
  adjusted_before: number;
  adjustment: number;
}
interface Statement {
  usage_premium: number;
  billed_premium: number;
  score_adjustment: number;
  score_months: ScoreMonth[];
  journeys: Array<{ start_at: string; usage_premium: number }>;
}

const clock = fixedClock('2025-05-31T12:00:00Z');
const pence = (pounds: number) => Math.round(pounds * 100);
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let devices = 0;

before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Score Rules');
});
after(() => t.close());

const inject = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: acme.sandbox, ...(payload === undefined ? {} : { payload }) });

const RULE = {
  bands: [
    { min_score: 90, adjustment_percent: -10 },
    { min_score: 50, adjustment_percent: 0 },
    { min_score: 0, adjustment_percent: 10 },
  ],
  cap_percent: 10,
};

/** A policy of `product` with a device bound; its reference and device. */
async function policyOf(product: string) {
  clock.set('2025-05-31T12:00:00Z');
  const { reference } = await make.policy(t.app, acme, { policy: { product_reference: product } });
  const deviceId = `score-rules-${String(process.pid)}-${String(++devices)}`;
  await make.device(t.app, acme, reference, { deviceId });
  return { reference, deviceId };
}

/** A device trip of `smoothSeconds` of smooth driving from `startIso`, cut and scored. */
async function deviceTrip(deviceId: string, startIso: string, smoothSeconds: number) {
  clock.set(new Date(Date.parse(startIso) + 3 * 3_600_000).toISOString());
  const r = await inject('POST', '/telematics/positions', {
    device_id: deviceId,
    positions: trace(startIso, 0, 5, smoothSeconds),
  });
  assert.equal(r.statusCode, 202, r.body);
  await t.container.services.telematics.cutPendingTrips(clock.now());
}

async function statements(reference: string): Promise<Statement[]> {
  const r = await inject('GET', `/statements?policy_reference=${reference}&limit=50`);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ statements: Statement[] }>().statements.reverse();
}

async function bill(date: string) {
  clock.set(`${date}T03:00:00Z`);
  assert.equal((await billingRun(t.app, t.adminHeaders, date)).failed, 0);
}

describe('the score_pricing rule', () => {
  test('each bad field is named in a 422, on create and on update; a sound rule is shown back', async () => {
    const create = (reference: string, scorePricing: object) =>
      inject('POST', '/products', {
        product_reference: reference,
        name: reference,
        usage_unit: 'mile',
        rules: { score_pricing: scorePricing },
      });
    const pathsOf = (body: string) => (JSON.parse(body) as Problem).errors?.map((e) => e.path).sort();

    const schema = await create('bad-schema', {
      bands: [{ from: 90, min_score: 90, adjustment_percent: -150 }],
      cap_percent: 120,
    });
    assert.equal(schema.statusCode, 422, schema.body);
    assert.equal((JSON.parse(schema.body) as Problem).code, 'VALIDATION_FAILED');
    const schemaPaths = pathsOf(schema.body) ?? [];
    for (const path of [
      '/body/rules/score_pricing/bands/0/from',
      '/body/rules/score_pricing/bands/0/adjustment_percent',
      '/body/rules/score_pricing/cap_percent',
    ])
      assert.ok(
        schemaPaths.some((p) => p === path),
        `${path} in ${schemaPaths.join(', ')}`,
      );
    const empty = await create('bad-empty', { bands: [], cap_percent: 10 });
    assert.equal(empty.statusCode, 422);
    assert.deepEqual(pathsOf(empty.body), ['/body/rules/score_pricing/bands']);

    const exact = await create('bad-exact', {
      bands: [
        { min_score: 90.05, adjustment_percent: -10 },
        { min_score: 50, adjustment_percent: 2.555 },
        { min_score: 50, adjustment_percent: 1 },
      ],
      cap_percent: 10.001,
    });
    assert.equal(exact.statusCode, 422, exact.body);
    assert.deepEqual(pathsOf(exact.body), [
      '/body/rules/score_pricing/bands/0/min_score',
      '/body/rules/score_pricing/bands/1/adjustment_percent',
      '/body/rules/score_pricing/bands/2/min_score',
      '/body/rules/score_pricing/cap_percent',
    ]);
    assert.equal((await inject('GET', '/products/bad-exact')).statusCode, 404);

    const good = await create('score-shown', RULE);
    assert.equal(good.statusCode, 201, good.body);
    assert.deepEqual(good.json<{ rules: unknown }>().rules, { score_pricing: RULE });
    const update = await inject('PUT', '/products/score-shown', {
      rules: { score_pricing: { ...RULE, cap_percent: 5.125 } },
    });
    assert.equal(update.statusCode, 422, update.body);
    assert.deepEqual(pathsOf(update.body), ['/body/rules/score_pricing/cap_percent']);
    const kept = await inject('GET', '/products/score-shown');
    assert.equal(kept.json<{ versions: unknown[] }>().versions.length, 1);
  });
});

describe('statements priced by score', () => {
  test('off by default: a product without the rule has no score line, whatever the score', async () => {
    await createProduct(t.app, acme.sandbox, 'unscored', { daily_cap_distance: 500 });
    const { reference, deviceId } = await policyOf('unscored');
    await deviceTrip(deviceId, '2025-06-10T08:00:00Z', 4800);
    await bill('2025-07-01');
    const [june] = await statements(reference);
    assert.ok(june !== undefined);
    assert.equal(june.score_adjustment, 0);
    assert.deepEqual(june.score_months, []);
  });

  test('a month under 50 scored miles is not adjusted; a month not over waits, then is adjusted whole', async () => {
    await createProduct(t.app, acme.sandbox, 'scored', { score_pricing: RULE });
    const { reference, deviceId } = await policyOf('scored');
    // June: a short trip (a few miles) and a long drive by API: June's score never stands.
    await deviceTrip(deviceId, '2025-06-10T08:00:00Z', 240);
    clock.set('2025-06-12T12:00:00Z');
    await drive(t.app, acme.sandbox, reference, '2025-06-12T09:00:00Z', 'london', 'birmingham');
    await bill('2025-07-01');
    const [june] = await statements(reference);
    assert.ok(june !== undefined && june.usage_premium > 0);
    assert.deepEqual(june.score_months, []);

    // July: a long smooth trip (a score of 90 or more), billed on demand on the 20th: July is not over.
    await deviceTrip(deviceId, '2025-07-08T08:00:00Z', 4800);
    clock.set('2025-07-20T12:00:00Z');
    const onDemand = await inject('POST', '/statements', {
      policy_reference: reference,
      effective_date: Date.parse('2025-07-20T12:00:00Z') / 1000,
    });
    assert.equal(onDemand.statusCode, 201, onDemand.body);
    assert.deepEqual(onDemand.json<Statement>().score_months, []);
    clock.set('2025-07-25T12:00:00Z');
    await drive(t.app, acme.sandbox, reference, '2025-07-25T09:00:00Z', 'birmingham', 'london');

    // 1 August: July is over: −10 % of all July's usage, billed over both statements.
    await bill('2025-08-01');
    const all = await statements(reference);
    const julyUsage = all
      .flatMap((s) => s.journeys)
      .filter((j) => j.start_at.startsWith('2025-07'))
      .reduce((sum, j) => sum + pence(j.usage_premium), 0);
    const august = all.at(-1);
    assert.ok(august !== undefined);
    assert.equal(august.score_months.length, 1);
    const [july] = august.score_months;
    assert.ok(july !== undefined && july.score !== null && july.score >= 90);
    // −10 % of the usage, rounded half to even: exact in integers here (tenths of a penny).
    // usage × 10 % is usage / 10 pence: its last digit is the tenths of a penny.
    const whole = Math.floor(julyUsage / 10);
    const rest = julyUsage % 10;
    const expected = -(rest > 5 || (rest === 5 && whole % 2 === 1) ? whole + 1 : whole);
    assert.deepEqual(july, {
      month: '2025-07',
      score: july.score,
      adjustment_percent: -10,
      usage_premium: julyUsage / 100,
      adjusted_before: 0,
      adjustment: expected / 100,
    });
    assert.equal(pence(august.score_adjustment), expected);
  });

  test('the final statement of a cancelled policy adjusts its last month, though the month is not over', async () => {
    const { reference, deviceId } = await policyOf('scored');
    await deviceTrip(deviceId, '2025-06-05T08:00:00Z', 4800);
    const endAt = new Date('2025-06-10T12:00:00Z');
    clock.set(endAt.toISOString());
    const cancelled = await inject('DELETE', `/policys/${reference}`, {
      effective_date: endAt.getTime() / 1000,
      reason: 'sold the car',
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const company = await t.container.database.db
      .selectFrom('companies')
      .select('id')
      .where('company_reference', '=', acme.company_reference)
      .executeTakeFirstOrThrow();
    // What the worker's `statements.final` job does after the cancellation commits.
    await t.container.services.statements.issueFinal(asTenant(company.id, 'sandbox'), reference, endAt);
    const [final] = await statements(reference);
    assert.ok(final !== undefined);
    const usage = pence(final.usage_premium);
    const [june] = final.score_months;
    assert.ok(june !== undefined && june.score !== null && june.score >= 90, JSON.stringify(june));
    assert.equal(june.month, '2025-06');
    assert.equal(june.usage_premium, usage / 100);
    const whole = Math.floor(usage / 10);
    const rest = usage % 10;
    assert.equal(pence(june.adjustment), -(rest > 5 || (rest === 5 && whole % 2 === 1) ? whole + 1 : whole));
  });
});
