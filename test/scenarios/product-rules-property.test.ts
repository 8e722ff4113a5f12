import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { fixedClock } from '../../src/platform/clock.ts';
import { capMetres, freeMetres } from '../../src/modules/products/index.ts';
import { applyStatementRules } from '../../src/modules/statements/rules/usage-rules.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { createProduct, drive } from '../support/driving.ts';
import { make } from '../support/factories.ts';

// The database path (sums for most statements, journeys one by one where a rule may touch them) gives
// what the pure rules give over the statement's journeys, for random products and months of driving.
const clock = fixedClock('2025-11-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Property');
});
after(() => t.close());

/** Where each drive goes from London: about 101 miles, 52 miles, or across the centre. */
const DESTINATIONS = ['birmingham', 'oxford', 'centralLondon'] as const;

interface StatementBody {
  capped_days: Array<{ date: string; distance_charged_in_metres: number; credit: number }>;
  cap_credit: number;
  annual_cap_credit: number;
  free_distance_credit: number;
  minimum_top_up: number;
  journeys: Array<{
    journey_reference: string;
    start_at: string;
    distance_in_metres: number;
    usage_premium: number;
  }>;
}

const pence = (pounds: number) => Math.round(pounds * 100);
let n = 0;

test('a statement’s rule lines are what the pure rules make of its journeys', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        daily: fc.option(fc.integer({ min: 50, max: 250 }), { nil: undefined }),
        annual: fc.option(fc.integer({ min: 100, max: 600 }), { nil: undefined }),
        free: fc.option(fc.integer({ min: 0, max: 80 }), { nil: undefined }),
        minimum: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
      }),
      // Up to 3 journeys a day over 6 days, each in its own three-hour slot.
      fc.uniqueArray(
        fc.record({ slot: fc.integer({ min: 0, max: 17 }), route: fc.integer({ min: 0, max: 2 }) }),
        { maxLength: 10, selector: (j) => j.slot },
      ),
      async (rules, drives) => {
        const reference = `prop-${String(++n)}`;
        await createProduct(t.app, acme.sandbox, reference, {
          ...(rules.daily === undefined ? {} : { daily_cap_distance: rules.daily }),
          ...(rules.annual === undefined ? {} : { annual_cap_distance: rules.annual }),
          ...(rules.free === undefined ? {} : { free_distance_per_statement: rules.free }),
          ...(rules.minimum === undefined ? {} : { minimum_usage_premium: rules.minimum / 100 }),
        });
        const { reference: policy } = await make.policy(t.app, acme, {
          policy: { product_reference: reference },
        });
        for (const { slot, route } of drives) {
          // Day 10 + slot/3 of November, at 06:00 + 3 h × (slot mod 3), UTC (GMT in November).
          const start =
            Date.parse('2025-11-10T06:00:00Z') / 1000 + Math.floor(slot / 3) * 86_400 + (slot % 3) * 3 * 3600;
          await drive(t.app, acme.sandbox, policy, start, 'london', DESTINATIONS[route] ?? 'birmingham');
        }
        const statement = await make.statement<StatementBody>(t.app, acme, policy, '2025-11-17T00:00:00Z');
        const expected = applyStatementRules({
          journeys: statement.journeys.map((j) => ({
            id: j.journey_reference,
            startAt: new Date(j.start_at),
            distanceMetres: j.distance_in_metres,
            usagePremiumPence: pence(j.usage_premium),
            usageRate: '0.045',
            usageUnit: 'mile',
          })),
          earlierDays: new Map(),
          rulesOn: () => ({
            dailyCapMetres: rules.daily === undefined ? null : capMetres(rules.daily, 'mile'),
            annualCapMetres: rules.annual === undefined ? null : capMetres(rules.annual, 'mile'),
          }),
          yearOf: () => 'the term',
          yearCountedMetres: new Map(),
          freeDistanceMetres: rules.free === undefined ? 0 : freeMetres(rules.free, 'mile'),
          minimumUsagePremiumPence: rules.minimum ?? 0,
        });
        assert.deepEqual(
          {
            capped_days: statement.capped_days.map((d) => [
              d.date,
              d.distance_charged_in_metres,
              pence(d.credit),
            ]),
            cap: pence(statement.cap_credit),
            annual: pence(statement.annual_cap_credit),
            free: pence(statement.free_distance_credit),
            top_up: pence(statement.minimum_top_up),
          },
          {
            capped_days: expected.cappedDays.map((d) => [d.date, d.chargedMetres, d.creditPence]),
            cap: expected.capCreditPence,
            annual: expected.annualCapCreditPence,
            free: expected.freeDistanceCreditPence,
            top_up: expected.minimumTopUpPence,
          },
        );
      },
    ),
    { numRuns: 25 },
  );
});
