import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../src/platform/clock.ts';
import { usagePremiumPence } from '../../src/modules/journeys/index.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { billingRun as billingRunOf, createProduct, drive, unix } from '../support/driving.ts';
import { make } from '../support/factories.ts';

// Months of billing under a product's rules, on a clock moved by hand. The example policy's term runs
// from 2025-06-01 (London) for a year, billing day 1, usage 0.045 a mile. Journeys are long drives between
// London and Birmingham (about 101 miles each way), so two in a day pass a 150-mile cap.
interface CappedDay {
  date: string;
  distance_driven_in_metres: number;
  distance_charged_in_metres: number;
  credit: number;
}
interface Statement {
  policy_version_reference: string;
  statement_start_date: string;
  statement_end_date: string;
  journey_count: number;
  usage_premium: number;
  subscription_premium: number;
  total_premium: number;
  billed_premium: number;
  credits_used: number;
  capped_days: CappedDay[];
  cap_credit: number;
  annual_cap_credit: number;
  free_distance_credit: number;
  minimum_top_up: number;
  brought_forward: number;
  journeys: Array<{
    journey_reference: string;
    distance_in_metres: number;
    usage_premium: number;
    usage_rate: number;
  }>;
}

const clock = fixedClock('2025-11-20T12:00:00Z');
const pence = (pounds: number) => Math.round(pounds * 100);

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Rules');
});
after(() => t.close());

const product = (reference: string, rules: Record<string, unknown>) =>
  createProduct(t.app, acme.sandbox, reference, rules);

/** A new policy of `productReference`. */
const policy = async (productReference: string) =>
  (await make.policy(t.app, acme, { policy: { product_reference: productReference } })).reference;

/** A drive out of London to Birmingham or Oxford, or back from Birmingham. */
const go = (reference: string, startIso: string, to: 'birmingham' | 'london' | 'oxford') =>
  to === 'london'
    ? drive(t.app, acme.sandbox, reference, startIso, 'birmingham', 'london')
    : drive(t.app, acme.sandbox, reference, startIso, 'london', to);

const billingRun = (date: string) => billingRunOf(t.app, t.adminHeaders, date);

const statements = async (reference: string) =>
  (await t.app.inject({ url: `/statements?policy_reference=${reference}&limit=50`, headers: acme.sandbox }))
    .json<{ statements: Statement[] }>()
    .statements.reverse();

const RATE = '0.045';
const premiumOf = (metres: number) => usagePremiumPence(RATE, metres, 'mile');
const CAP_150_MILES = 241_401;

/** Every statement's lines add up, and no London day is charged past 150 miles. */
function assertConsistent(all: readonly Statement[]) {
  for (const s of all) {
    const usage = s.journeys.reduce((sum, j) => sum + pence(j.usage_premium), 0);
    assert.equal(pence(s.usage_premium), usage, 'usage premium is the sum of the journeys');
    assert.equal(
      pence(s.cap_credit),
      s.capped_days.reduce((sum, d) => sum + pence(d.credit), 0),
    );
    for (const d of s.capped_days) assert.ok(d.distance_charged_in_metres <= CAP_150_MILES, d.date);
    assert.ok(s.billed_premium >= 0);
    assert.equal(
      pence(s.billed_premium),
      pence(s.total_premium) -
        pence(s.cap_credit) -
        pence(s.annual_cap_credit) -
        pence(s.free_distance_credit) +
        pence(s.minimum_top_up) -
        pence(s.credits_used) +
        pence(s.brought_forward),
    );
  }
}

describe('daily caps', () => {
  test('capped days across the October clock change, a late upload and a void on a capped day, billed twice', async () => {
    await product('capped-daily', { daily_cap_distance: 150 });
    const reference = await policy('capped-daily');
    // 23:30 UTC on 25 October is 00:30 BST on the 26th: the London day that has 25 hours.
    const a = await go(reference, '2025-10-25T23:30:00Z', 'birmingham');
    const b = await go(reference, '2025-10-26T10:00:00Z', 'london');
    const c = await go(reference, '2025-10-27T08:00:00Z', 'birmingham');
    const d = await go(reference, '2025-10-27T14:00:00Z', 'london');
    await go(reference, '2025-10-29T09:00:00Z', 'oxford');

    // Bill June to October on their billing days; then every day again, which changes nothing.
    const days = ['2025-07-01', '2025-08-01', '2025-09-01', '2025-10-01', '2025-11-01'];
    for (const date of days) assert.equal((await billingRun(date)).failed, 0);
    const billed = await statements(reference);
    assert.equal(billed.length, 5);
    for (const date of days) assert.equal((await billingRun(date)).billed, 0);
    assert.deepEqual(await statements(reference), billed);
    const [october] = billed.slice(-1);
    assert.ok(october !== undefined);
    assert.equal(october.journey_count, 5);
    assert.deepEqual(
      october.capped_days.map((day) => day.date),
      ['2025-10-26', '2025-10-27'],
    );
    const [day26, day27] = october.capped_days;
    assert.ok(day26 !== undefined && day27 !== undefined);
    assert.equal(day26.distance_driven_in_metres, a.distance_in_metres + b.distance_in_metres);
    assert.equal(day26.distance_charged_in_metres, CAP_150_MILES);
    // The latest journey of the day is credited the premium of the distance over the cap, at its rate.
    const over26 = a.distance_in_metres + b.distance_in_metres - CAP_150_MILES;
    assert.equal(pence(day26.credit), premiumOf(over26));
    const over27 = c.distance_in_metres + d.distance_in_metres - CAP_150_MILES;
    assert.equal(pence(day27.credit), premiumOf(over27));
    assertConsistent([october]);

    // A late upload on the 27th, already charged to its cap: credited in full on the next statement.
    const late = await go(reference, '2025-10-27T18:00:00Z', 'oxford');
    // And a void of the 26th's uncredited journey: b gets the room back, so the void credits a's premium
    // less what b is now charged for the distance it had credited.
    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${a.journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'driven by someone else' },
    });
    assert.equal(voided.statusCode, 200, voided.body);
    const next = await make.statement<Statement>(t.app, acme, reference, '2025-11-15T12:00:00Z');
    assert.equal(next.journey_count, 1);
    assert.deepEqual(next.capped_days, [
      {
        date: '2025-10-27',
        distance_driven_in_metres: c.distance_in_metres + d.distance_in_metres + late.distance_in_metres,
        distance_charged_in_metres: CAP_150_MILES,
        credit: late.usage_premium,
      },
    ]);
    // The void's credit: a's premium, less b's charge for the 26th's room (b was credited over26 metres;
    // it is now charged for all of them, as b alone is under the cap).
    const givenBack = premiumOf(over26);
    const expectedVoidCredit = pence(a.usage_premium) - givenBack;
    // November's installment, and the late upload credited in full; the void's credit pays what it can.
    assert.equal(pence(next.total_premium), 2999 + pence(late.usage_premium));
    assert.equal(pence(next.cap_credit), pence(late.usage_premium));
    assert.equal(pence(next.credits_used), expectedVoidCredit);
    assert.equal(pence(next.billed_premium), 2999 - expectedVoidCredit);
    assertConsistent(await statements(reference));
  });
});

const statementTo = (reference: string, endIso: string) =>
  make.statement<Statement>(t.app, acme, reference, endIso);

describe('annual cap, free distance and minimum', () => {
  test('an annual cap crossed mid-statement; free distance from the first journey; the minimum tops up', async () => {
    await product('capped-yearly', {
      annual_cap_distance: 300,
      free_distance_per_statement: 20,
      minimum_usage_premium: 15,
    });
    const reference = await policy('capped-yearly');
    const js = [
      await go(reference, '2025-11-10T08:00:00Z', 'birmingham'),
      await go(reference, '2025-11-11T08:00:00Z', 'london'),
      await go(reference, '2025-11-12T08:00:00Z', 'birmingham'),
      await go(reference, '2025-11-13T08:00:00Z', 'london'),
    ];
    const s = await statementTo(reference, '2025-11-14T00:00:00Z');
    const driven = js.reduce((sum, j) => sum + j.distance_in_metres, 0);
    const over = driven - 482_803; // 300 miles, rounded down to whole metres
    const [, , third, fourth] = js;
    assert.ok(third !== undefined && fourth !== undefined && over > fourth.distance_in_metres);
    // The year's last journeys go over: the fourth in full, the rest of the excess from the third.
    assert.equal(
      pence(s.annual_cap_credit),
      pence(fourth.usage_premium) + premiumOf(over - fourth.distance_in_metres),
    );
    assert.equal(pence(s.free_distance_credit), premiumOf(32_187)); // 20 miles, rounded up
    const left = pence(s.usage_premium) - pence(s.annual_cap_credit) - pence(s.free_distance_credit);
    assert.ok(left < 1500);
    assert.equal(pence(s.minimum_top_up), 1500 - left);
    assert.deepEqual(s.capped_days, []);

    // The year is capped now: the next journey is credited in full, and the minimum is the usage billed.
    const fifth = await go(reference, '2025-11-16T08:00:00Z', 'oxford');
    const next = await statementTo(reference, '2025-11-19T00:00:00Z');
    assert.equal(pence(next.annual_cap_credit), pence(fifth.usage_premium));
    assert.equal(pence(next.free_distance_credit), 0);
    assert.equal(pence(next.minimum_top_up), 1500);
    assertConsistent(await statements(reference));
  });
});

describe('a rate change on a capped day', () => {
  test('the journey over the cap is credited at its own rate, set by an adjustment that morning', async () => {
    await product('capped-rates', { daily_cap_distance: 150 });
    const made = await make.policy(t.app, acme, { policy: { product_reference: 'capped-rates' } });
    const { reference } = made;
    clock.set('2025-11-05T12:00:00Z');
    const before = await go(reference, '2025-11-05T08:00:00Z', 'birmingham');
    await make.adjustment(t.app, acme, made, {
      pricing: { usage_rate: 0.09 },
      effective_date: unix('2025-11-05T12:00:00Z'),
    });
    clock.set('2025-11-20T12:00:00Z');
    const afterRate = await go(reference, '2025-11-05T14:00:00Z', 'london');
    const s = await statementTo(reference, '2025-11-06T00:00:00Z');
    const over = before.distance_in_metres + afterRate.distance_in_metres - CAP_150_MILES;
    assert.deepEqual(
      s.journeys.map((j) => j.usage_rate),
      [0.045, 0.09],
    );
    assert.equal(pence(s.cap_credit), usagePremiumPence('0.09', over, 'mile'));
    assertConsistent([s]);
  });
});

describe('a product’s new rules', () => {
  test('a cap raised from a date bills the days before it by the old cap', async () => {
    clock.set('2025-11-01T12:00:00Z');
    await product('capped-changing', { daily_cap_distance: 150 });
    const put = await t.app.inject({
      method: 'PUT',
      url: '/products/capped-changing',
      headers: acme.sandbox,
      payload: { rules: { daily_cap_distance: 500 }, effective_date: unix('2025-11-07T00:00:00Z') },
    });
    assert.equal(put.statusCode, 200, put.body);
    clock.set('2025-11-20T12:00:00Z');
    const reference = await policy('capped-changing');
    await go(reference, '2025-11-03T08:00:00Z', 'birmingham');
    await go(reference, '2025-11-03T14:00:00Z', 'london');
    await go(reference, '2025-11-10T08:00:00Z', 'birmingham');
    await go(reference, '2025-11-10T14:00:00Z', 'london');
    const s = await statementTo(reference, '2025-11-12T00:00:00Z');
    assert.deepEqual(
      s.capped_days.map((d) => d.date),
      ['2025-11-03'],
    );
  });
});
