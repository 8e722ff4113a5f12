import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { usagePremiumPence } from '../../journeys/rules/index.ts';
import { londonDate } from './statement-period.ts';
import { capMetres, freeMetres } from '../../products/index.ts';
import {
  applyStatementRules,
  dayAfterVoids,
  needsJourneys,
  withoutJourneys,
  type DayRules,
  type RuleJourney,
  type StatementRulesInput,
  type StatementRulesResult,
} from './usage-rules.ts';

const MILE = 1609;
const RATES = ['0.04', '0.05', '0.075', '0.123456', '0.2', '0.01'];
// March 2025: London's clocks go forward on the 30th, so days of 23 hours are in the mix.
const MONTH_START_MS = Date.parse('2025-03-20T00:00:00Z');
const DAY_MS = 86_400_000;
const YEAR_BOUNDARY = new Date('2025-03-28T00:00:00Z');

const journey = (id: string, startIso: string, distanceMetres: number, usageRate = '0.05'): RuleJourney => ({
  id,
  startAt: new Date(startIso),
  distanceMetres,
  usageRate,
  usageUnit: 'mile',
  usagePremiumPence: usagePremiumPence(usageRate, distanceMetres, 'mile'),
});

const journeysArb = fc
  .uniqueArray(
    fc.record({
      offsetS: fc.integer({ min: 0, max: (12 * DAY_MS) / 1000 }),
      distanceMetres: fc.integer({ min: 0, max: 250 * MILE }),
      rate: fc.constantFrom(...RATES),
    }),
    { maxLength: 25, selector: (j) => j.offsetS },
  )
  .map((items) =>
    items.map((j, i) => {
      const startAt = new Date(MONTH_START_MS + j.offsetS * 1000);
      return {
        ...journey(`j${String(i).padStart(2, '0')}`, startAt.toISOString(), j.distanceMetres, j.rate),
      };
    }),
  );

const rulesArb = fc.record({
  dailyCap: fc.option(fc.integer({ min: 0, max: 300 * MILE }), { nil: null }),
  // A product version from the 25th may change the daily cap.
  laterDailyCap: fc.option(fc.integer({ min: 0, max: 300 * MILE }), { nil: null }),
  annualCap: fc.option(fc.integer({ min: 0, max: 2000 * MILE }), { nil: null }),
  free: fc.integer({ min: 0, max: 200 * MILE }),
  minimum: fc.integer({ min: 0, max: 5000 }),
  countedBefore: fc.integer({ min: 0, max: 1500 * MILE }),
  earlierCharged: fc.integer({ min: 0, max: 200 * MILE }),
  twoYears: fc.boolean(),
});

type Rules = typeof rulesArb extends fc.Arbitrary<infer R> ? R : never;

function inputOf(journeys: readonly RuleJourney[], rules: Rules): StatementRulesInput {
  const firstDay = londonDate(new Date(MONTH_START_MS));
  const rulesOn = (date: string): DayRules => ({
    dailyCapMetres: date >= '2025-03-25' ? rules.laterDailyCap : rules.dailyCap,
    annualCapMetres: rules.annualCap,
  });
  return {
    journeys,
    // The first day was partly billed by an earlier statement.
    earlierDays: new Map([
      [firstDay, { drivenMetres: rules.earlierCharged + 1000, chargedMetres: rules.earlierCharged }],
    ]),
    rulesOn,
    yearOf: (at) => (rules.twoYears && at >= YEAR_BOUNDARY ? 'y2' : 'y1'),
    yearCountedMetres: new Map([['y1', rules.countedBefore]]),
    freeDistanceMetres: rules.free,
    minimumUsagePremiumPence: rules.minimum,
  };
}

const usageOf = (journeys: readonly RuleJourney[]) => journeys.reduce((s, j) => s + j.usagePremiumPence, 0);
/** The usage premium billed after the rules (before ledger credits). */
const billedUsage = (journeys: readonly RuleJourney[], r: StatementRulesResult) =>
  usageOf(journeys) -
  r.capCreditPence -
  r.annualCapCreditPence -
  r.freeDistanceCreditPence +
  r.minimumTopUpPence;

test('rules never bill below zero, never raise a bill, and their lines are exact sums of their credits', () => {
  fc.assert(
    fc.property(journeysArb, rulesArb, (journeys, rules) => {
      const input = inputOf(journeys, rules);
      const result = applyStatementRules(input);
      const ofRule = (rule: string) =>
        result.credits.filter((c) => c.rule === rule).reduce((s, c) => s + c.creditPence, 0);
      assert.equal(result.capCreditPence, ofRule('daily_cap'));
      assert.equal(
        result.capCreditPence,
        result.cappedDays.reduce((s, d) => s + d.creditPence, 0),
      );
      assert.equal(result.annualCapCreditPence, ofRule('annual_cap'));
      assert.equal(result.freeDistanceCreditPence, ofRule('free_distance'));
      for (const c of result.credits) {
        assert.ok(c.creditPence >= 0 && c.distanceMetres > 0, `credit ${JSON.stringify(c)}`);
        assert.ok(Number.isSafeInteger(c.creditPence));
      }
      // No journey is credited more than its premium or its distance.
      for (const j of journeys) {
        const its = result.credits.filter((c) => c.journeyId === j.id);
        assert.ok(its.reduce((s, c) => s + c.creditPence, 0) <= j.usagePremiumPence);
        assert.ok(its.reduce((s, c) => s + c.distanceMetres, 0) <= j.distanceMetres);
      }
      const billed = billedUsage(journeys, result);
      assert.ok(billed >= 0);
      // Caps and free distance never raise what is billed: compare with no rules but the minimum.
      const none = applyStatementRules({
        ...input,
        rulesOn: () => ({ dailyCapMetres: null, annualCapMetres: null }),
        freeDistanceMetres: 0,
      });
      assert.ok(billed <= billedUsage(journeys, none), `${billed} > ${billedUsage(journeys, none)}`);
      assert.equal(billed, Math.max(rules.minimum, billed - result.minimumTopUpPence));
    }),
    { numRuns: 300 },
  );
});

test('no day is charged beyond its cap, counting what earlier statements charged on it', () => {
  fc.assert(
    fc.property(journeysArb, rulesArb, (journeys, rules) => {
      const input = inputOf(journeys, rules);
      const result = applyStatementRules(input);
      const days = new Set(journeys.map((j) => londonDate(j.startAt)));
      for (const date of days) {
        const cap = input.rulesOn(date).dailyCapMetres;
        if (cap === null) continue;
        const earlier = input.earlierDays.get(date)?.chargedMetres ?? 0;
        const driven = journeys
          .filter((j) => londonDate(j.startAt) === date)
          .reduce((s, j) => s + j.distanceMetres, 0);
        const capped = result.credits
          .filter((c) => c.rule === 'daily_cap' && c.date === date)
          .reduce((s, c) => s + c.distanceMetres, 0);
        assert.ok(earlier + driven - capped <= Math.max(cap, earlier), `day ${date}`);
        const line = result.cappedDays.find((d) => d.date === date);
        assert.equal(line === undefined, capped === 0);
        if (line !== undefined) assert.equal(line.chargedMetres, Math.max(cap, earlier));
      }
      // The annual cap likewise, in each year.
      for (const [year, counted] of result.yearCountedMetres) {
        const before = input.yearCountedMetres.get(year) ?? 0;
        if (rules.annualCap !== null) assert.ok(counted <= Math.max(rules.annualCap, before));
      }
    }),
    { numRuns: 300 },
  );
});

test('the result does not depend on the order journeys were uploaded in', () => {
  fc.assert(
    fc.property(
      journeysArb.chain((js) => fc.tuple(fc.constant(js), fc.shuffledSubarray(js, { minLength: js.length }))),
      rulesArb,
      ([journeys, shuffled], rules) => {
        assert.deepEqual(
          applyStatementRules(inputOf(shuffled, rules)),
          applyStatementRules(inputOf(journeys, rules)),
        );
      },
    ),
    { numRuns: 200 },
  );
});

test('a statement its sums show no rule can touch gets, without its journeys, what it would with them', () => {
  fc.assert(
    fc.property(journeysArb, rulesArb, (journeys, rules) => {
      const input = inputOf(journeys, { ...rules, twoYears: false, earlierCharged: 0 });
      const byDay = new Map<string, number>();
      for (const j of journeys) {
        const d = londonDate(j.startAt);
        byDay.set(d, (byDay.get(d) ?? 0) + j.distanceMetres);
      }
      const sums = {
        distanceMetres: journeys.reduce((s, j) => s + j.distanceMetres, 0),
        usagePremiumPence: usageOf(journeys),
        busiestDayMetres: Math.max(0, ...byDay.values()),
        year: 'y1',
      };
      const caps = [rules.dailyCap, rules.laterDailyCap].filter((c) => c !== null);
      const period = {
        leastDailyCapMetres: caps.length === 0 ? null : Math.min(...caps),
        leastAnnualCapMetres: rules.annualCap,
        freeDistanceMetres: rules.free,
        minimumUsagePremiumPence: rules.minimum,
      };
      if (needsJourneys(sums, period, input.yearCountedMetres)) return;
      const full = applyStatementRules(input);
      const fromSums = withoutJourneys(sums, period, input.yearCountedMetres);
      assert.deepEqual(fromSums, { ...full, yearCountedMetres: fromSums.yearCountedMetres });
      for (const [year, metres] of fromSums.yearCountedMetres)
        assert.equal(metres, full.yearCountedMetres.get(year));
    }),
    { numRuns: 300 },
  );
});

test('a capped day: the latest journeys are credited for the distance over the cap, at their own rates', () => {
  const result = applyStatementRules({
    journeys: [
      journey('a', '2025-06-02T07:00:00Z', 160_934, '0.04'),
      journey('b', '2025-06-02T12:00:00Z', 128_748, '0.05'),
      journey('c', '2025-06-02T18:00:00Z', 32_187, '0.10'),
    ],
    earlierDays: new Map(),
    rulesOn: () => ({ dailyCapMetres: capMetres(150, 'mile'), annualCapMetres: null }),
    yearOf: () => 'y',
    yearCountedMetres: new Map(),
    freeDistanceMetres: 0,
    minimumUsagePremiumPence: 0,
  });
  // 200 miles driven, 150 charged: c's 20 miles at 10p and 30 of b's 80 miles at 5p.
  assert.deepEqual(result.cappedDays, [
    { date: '2025-06-02', drivenMetres: 321869, chargedMetres: 241401, creditPence: 200 + 150 },
  ]);
  assert.deepEqual(
    result.credits.map((c) => [c.journeyId, c.creditPence]),
    [
      ['c', 200],
      ['b', 150],
    ],
  );
});

test('a void on a capped day gives the freed room back to the day’s credited journeys, never more than was paid', () => {
  const a = {
    ...journey('a', '2025-06-02T07:00:00Z', 160_934, '0.04'),
    dailyCapCreditMetres: 0,
    dailyCapCreditPence: 0,
  };
  const b = {
    ...journey('b', '2025-06-02T12:00:00Z', 160_934, '0.04'),
    dailyCapCreditMetres: 80_467,
    dailyCapCreditPence: 200,
  };
  // a (100 miles, paid £4) voided: b is charged in full now, £2 more: the void credits £4 − £2.
  const after = dayAfterVoids({
    date: '2025-06-02',
    remaining: [b],
    dailyCapMetres: 241_401,
    voidedPaidPence: 400,
  });
  assert.equal(after.chargedBackPence, 200);
  assert.equal(after.chargedBackMetres, 80_467);
  // Were the voided journey paid less than the charge given back, nothing is given back.
  assert.equal(
    dayAfterVoids({ date: '2025-06-02', remaining: [b], dailyCapMetres: 241_401, voidedPaidPence: 100 })
      .chargedBackPence,
    0,
  );
  // A day still over its cap after the void gives back only what fits under it.
  const partly = dayAfterVoids({
    date: '2025-06-02',
    remaining: [a, b],
    dailyCapMetres: 241_401,
    voidedPaidPence: 1000,
  });
  assert.equal(partly.chargedBackMetres, 241_401 - (321_868 - 80_467));
});

test('distances in a product’s unit become whole metres in the policyholder’s favour', () => {
  assert.equal(capMetres(150, 'mile'), 241_401);
  assert.equal(freeMetres(150, 'mile'), 241_402);
  assert.equal(capMetres(0.1, 'km'), 100);
  assert.equal(capMetres(10_000, 'mile'), 16_093_440);
});
