import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { fixedClock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { billingRun as billingRunOf, createProduct, drive } from '../support/driving.ts';
import { make } from '../support/factories.ts';
import { trace } from '../integration/scores/score-support.ts';
import { signInStaff } from '../integration/staff/staff-support.ts';

// Price by driving score over four months on a clock moved by hand, every billing day run twice. The
// policy's product takes 10 % off a month scored 88 or more and adds 5 % from 50; each month has one long
// device trip (about 60 miles, so its score stands) and a drive to Birmingham. June is billed with four
// harsh brakes (+5 %); one of them is disputed after billing and accepted, which lifts June above 88: the
// next statement credits June the difference, to the penny. July's only brake is disputed before it is
// billed: July waits for the decision (rejected) and is adjusted on the statement after.
interface ScoreMonth {
  month: string;
  score: number | null;
  adjustment_percent: number;
  usage_premium: number;
  adjusted_before: number;
  adjustment: number;
}
interface Statement {
  statement_end_date: string;
  usage_premium: number;
  total_premium: number;
  billed_premium: number;
  credits_used: number;
  brought_forward: number;
  cap_credit: number;
  annual_cap_credit: number;
  free_distance_credit: number;
  minimum_top_up: number;
  score_adjustment: number;
  score_months: ScoreMonth[];
  journeys: Array<{ start_at: string; usage_premium: number; is_void: boolean }>;
}
interface JourneyBody {
  journey_reference: string;
  /** UNIX seconds. */
  start_at: number;
  events: Array<{ event_reference: string; kind: string }>;
}

const clock = fixedClock('2025-05-31T12:00:00Z');
const pence = (pounds: number) => Math.round(pounds * 100);
/** Percent of pence, rounded half to even to the penny: decimal arithmetic, apart from the code's. */
const percentOf = (usagePence: number, percent: number) =>
  new Decimal(usagePence).times(percent).div(100).toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let staffCount = 0;
before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Score Pricing');
});
after(() => t.close());

const headers = () => acme.sandbox;
const inject = (
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
  h: Record<string, string> = headers(),
) => t.app.inject({ method, url, headers: h, ...(payload === undefined ? {} : { payload }) });

/** Billing day `date`, run twice: the second run bills nobody and changes nothing. */
async function billTwice(date: string, reference: string): Promise<Statement[]> {
  clock.set(`${date}T03:00:00Z`);
  const first = await billingRunOf(t.app, t.adminHeaders, date);
  assert.equal(first.failed, 0);
  const billed = await statements(reference);
  const again = await billingRunOf(t.app, t.adminHeaders, date);
  assert.equal(again.billed, 0);
  assert.deepEqual(await statements(reference), billed);
  return billed;
}

async function statements(reference: string): Promise<Statement[]> {
  const r = await inject('GET', `/statements?policy_reference=${reference}&limit=50`);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ statements: Statement[] }>().statements.reverse();
}

/** A long device trip from `startIso` with `brakes` harsh brakes, cut and scored; its journey. */
async function deviceTrip(
  reference: string,
  deviceId: string,
  startIso: string,
  brakes: number,
  seed: number,
) {
  clock.set(new Date(Date.parse(startIso) + 3 * 3_600_000).toISOString());
  const r = await inject('POST', '/telematics/positions', {
    device_id: deviceId,
    positions: trace(startIso, brakes, seed, 4800),
  });
  assert.equal(r.statusCode, 202, r.body);
  await t.container.services.telematics.cutPendingTrips(clock.now());
  const listed = await inject('GET', `/journeys?policy_reference=${reference}`);
  const journey = listed
    .json<{ journeys: JourneyBody[] }>()
    .journeys.find((j) => j.start_at === Date.parse(startIso) / 1000 && j.events.length > 0);
  assert.ok(journey !== undefined, 'the trip is a journey with its events');
  assert.equal(journey.events.length, brakes);
  return journey;
}

async function monthScore(reference: string, month: string) {
  const r = await inject('GET', `/policys/${reference}/scores?from=${month}&to=${month}`);
  assert.equal(r.statusCode, 200, r.body);
  const [m] = r.json<{ months: Array<{ score: number | null; provisional: boolean; disputed: boolean }> }>()
    .months;
  assert.ok(m !== undefined);
  return m;
}

async function decide(disputeReference: string, decision: 'accept' | 'reject') {
  staffCount++;
  const staff = await signInStaff(t, `ops${String(staffCount)}@score-pricing.example`, 'operations');
  const r = await inject(
    'POST',
    `/admin/score-disputes/${disputeReference}/decision`,
    { decision, reason: decision === 'accept' ? 'A passenger drove' : 'The brake stands' },
    staff.headers,
  );
  assert.equal(r.statusCode, 200, r.body);
}

/** The month's usage premium among a statement's journeys, pence. */
const usageOf = (s: Statement, month: string) =>
  s.journeys
    .filter((j) => !j.is_void && j.start_at.startsWith(month))
    .reduce((sum, j) => sum + pence(j.usage_premium), 0);

function assertAddsUp(s: Statement) {
  assert.equal(
    pence(s.score_adjustment),
    s.score_months.reduce((sum, m) => sum + pence(m.adjustment), 0),
  );
  assert.equal(
    pence(s.billed_premium),
    pence(s.total_premium) -
      pence(s.cap_credit) -
      pence(s.annual_cap_credit) -
      pence(s.free_distance_credit) +
      pence(s.minimum_top_up) +
      pence(s.score_adjustment) -
      pence(s.credits_used) +
      pence(s.brought_forward),
  );
}

describe('price by score', () => {
  test('a dispute accepted after billing credits the difference on the next statement; a disputed month waits', async () => {
    await createProduct(t.app, headers(), 'score-priced', {
      score_pricing: {
        bands: [
          { min_score: 88, adjustment_percent: -10 },
          { min_score: 50, adjustment_percent: 5 },
          { min_score: 0, adjustment_percent: 10 },
        ],
        cap_percent: 10,
      },
    });
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'score-priced' } });
    const deviceId = `score-pricing-${String(process.pid)}`;
    await make.device(t.app, acme, reference, { deviceId });

    // June: four harsh brakes, below 88.
    const june = await deviceTrip(reference, deviceId, '2025-06-10T08:00:00Z', 4, 7);
    clock.set('2025-06-12T12:00:00Z');
    await drive(t.app, headers(), reference, '2025-06-12T09:00:00Z', 'london', 'birmingham');
    const juneBefore = await monthScore(reference, '2025-06');
    assert.ok(
      juneBefore.score !== null && juneBefore.score >= 50 && juneBefore.score < 88,
      String(juneBefore.score),
    );

    // 1 July: June is over and undisputed: +5 % of its usage.
    const [first] = await billTwice('2025-07-01', reference);
    assert.ok(first !== undefined);
    const juneUsage = usageOf(first, '2025-06');
    const juneAt5 = percentOf(juneUsage, 5);
    assert.deepEqual(first.score_months, [
      {
        month: '2025-06',
        score: juneBefore.score,
        adjustment_percent: 5,
        usage_premium: juneUsage / 100,
        adjusted_before: 0,
        adjustment: juneAt5 / 100,
      },
    ]);
    assertAddsUp(first);
    // The worked example of docs/api.md ("Price by score"): £7.35 of June usage at +5 % is 36.75p → 37p.
    assert.deepEqual([juneBefore.score, juneUsage, juneAt5], [87.1, 735, 37]);

    // July: one brake over about 60 miles (above 88). The policyholder disputes a June brake (accepted on
    // the 20th, after June was billed) and July's brake (still pending on 1 August).
    const july = await deviceTrip(reference, deviceId, '2025-07-08T08:00:00Z', 1, 11);
    clock.set('2025-07-09T12:00:00Z');
    await drive(t.app, headers(), reference, '2025-07-09T09:00:00Z', 'birmingham', 'london');
    clock.set('2025-07-15T10:00:00Z');
    const disputeJune = await inject(
      'POST',
      `/policys/${reference}/score-events/${june.events[0]?.event_reference ?? ''}/disputes`,
      { reason: 'passenger' },
    );
    assert.equal(disputeJune.statusCode, 201, disputeJune.body);
    clock.set('2025-07-20T10:00:00Z');
    await decide(disputeJune.json<{ dispute_reference: string }>().dispute_reference, 'accept');
    const juneAfter = await monthScore(reference, '2025-06');
    assert.ok(juneAfter.score !== null && juneAfter.score >= 88, String(juneAfter.score));
    clock.set('2025-07-25T10:00:00Z');
    const disputeJuly = await inject(
      'POST',
      `/policys/${reference}/score-events/${july.events[0]?.event_reference ?? ''}/disputes`,
      { reason: 'gps_error' },
    );
    assert.equal(disputeJuly.statusCode, 201, disputeJuly.body);

    // 1 August: June brought to −10 %: the difference from +5 % credited, to the penny, on a line that
    // names June; July is disputed, so not adjusted yet.
    const second = (await billTwice('2025-08-01', reference)).at(-1);
    assert.ok(second !== undefined);
    const juneAtMinus10 = percentOf(juneUsage, -10);
    assert.deepEqual(second.score_months, [
      {
        month: '2025-06',
        score: juneAfter.score,
        adjustment_percent: -10,
        usage_premium: juneUsage / 100,
        adjusted_before: juneAt5 / 100,
        adjustment: (juneAtMinus10 - juneAt5) / 100,
      },
    ]);
    assert.equal(pence(second.score_adjustment), juneAtMinus10 - juneAt5);
    // docs/api.md: June rescored 90.3, −10 % of £7.35 is −73.5p → −74p (half to even); −74 − 37 = −£1.11.
    assert.deepEqual([juneAfter.score, juneAtMinus10, pence(second.score_adjustment)], [90.3, -74, -111]);
    assertAddsUp(second);

    // 10 August: July's dispute rejected. 1 September adjusts July (−10 %), and June no more.
    clock.set('2025-08-10T10:00:00Z');
    await decide(disputeJuly.json<{ dispute_reference: string }>().dispute_reference, 'reject');
    const julyScore = await monthScore(reference, '2025-07');
    assert.ok(julyScore.score !== null && julyScore.score >= 88);
    const third = (await billTwice('2025-09-01', reference)).at(-1);
    assert.ok(third !== undefined);
    const julyUsage = usageOf(second, '2025-07');
    assert.deepEqual(third.score_months, [
      {
        month: '2025-07',
        score: julyScore.score,
        adjustment_percent: -10,
        usage_premium: julyUsage / 100,
        adjusted_before: 0,
        adjustment: percentOf(julyUsage, -10) / 100,
      },
    ]);
    assertAddsUp(third);
    assert.deepEqual([julyScore.score, julyUsage, pence(third.score_adjustment)], [96.6, 722, -72]);

    // Over all statements, each month was adjusted exactly its final band's share of its usage.
    const all = await statements(reference);
    const adjustedFor = (month: string) =>
      all
        .flatMap((s) => s.score_months.filter((m) => m.month === month))
        .reduce((sum, m) => sum + pence(m.adjustment), 0);
    assert.equal(adjustedFor('2025-06'), juneAtMinus10);
    assert.equal(adjustedFor('2025-07'), percentOf(julyUsage, -10));
    assert.equal(adjustedFor('2025-08'), 0);
  });
});
