import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { fixedClock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';

// The example policy's term starts 2025-06-01 (London); everything here happens in its first 90 days.
const TERM_START = Date.parse('2025-05-31T23:00:00Z');
const DAY = 86_400_000;
const clock = fixedClock(new Date(TERM_START + 200 * DAY));
let t: TestApp;
let company: Awaited<ReturnType<typeof createCompany>>;
let runs = 0;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  company = await createCompany(t.app, 'Property');
});
after(() => t.close());

/** Journeys as [start offset in minutes from the term start, void after billing?, void before billing?]. */
const scenario = fc.record({
  journeys: fc
    .uniqueArray(fc.integer({ min: 0, max: 90 * 24 * 4 }), { minLength: 1, maxLength: 12 })
    .map((slots) => slots.map((s) => s * 15)),
  voids: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  statementDays: fc
    .uniqueArray(fc.integer({ min: 1, max: 95 }), { minLength: 1, maxLength: 4 })
    .map((d) => [...d].sort((a, b) => a - b)),
  uploadAfter: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 12, maxLength: 12 }),
});

test('property: every non-void journey is billed exactly once and the totals add up to the penny', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async ({ journeys, voids, statementDays, uploadAfter }) => {
      const { reference } = await make.policy(t.app, company, {
        proposer: { email: `prop${String(++runs)}@example.com` },
      });
      const ids: string[] = [];
      // Journeys are uploaded in batches between statements (uploadAfter says after which statement), so some are late.
      const statementEnds = statementDays.map((d) => TERM_START + d * DAY);
      const post = async (i: number) => {
        const start = TERM_START + (journeys[i] ?? 0) * 60_000;
        ids[i] = (
          await make.journey(t.app, company, reference, start / 1000, { points: [51.5, -0.12, 51.51, -0.11] })
        ).journey_reference;
        if (voids[i] === true && i % 2 === 0) {
          await t.app.inject({
            method: 'POST',
            url: `/journeys/${ids[i]}/void`,
            headers: company.sandbox,
            payload: { reason: 'before billing' },
          });
        }
      };
      for (let s = 0; s <= statementEnds.length; s++) {
        for (let i = 0; i < journeys.length; i++)
          if (Math.min(uploadAfter[i] ?? 0, statementEnds.length) === s) await post(i);
        const end = statementEnds[s];
        if (end === undefined) break;
        await make.statement(t.app, company, reference, Math.floor(end / 1000));
        // Some billed journeys are voided after their statement: a credit for the next.
        for (let i = 0; i < journeys.length; i++) {
          if (voids[i] === true && i % 2 === 1 && ids[i] !== undefined) {
            await t.app.inject({
              method: 'POST',
              url: `/journeys/${ids[i]}/void`,
              headers: company.sandbox,
              payload: { reason: 'after billing' },
            });
          }
        }
      }
      // A final statement far enough ahead bills whatever is left.
      await make.statement(t.app, company, reference, Math.floor((TERM_START + 120 * DAY) / 1000));

      const db = t.container.database.db;
      const policy = await db
        .selectFrom('policies')
        .select('id')
        .where('policy_reference', '=', reference)
        .executeTakeFirstOrThrow();
      const rows = await db
        .selectFrom('journeys')
        .select(['id', 'is_void', 'usage_premium_pence'])
        .where('policy_id', '=', policy.id)
        .execute();
      const statements = await db
        .selectFrom('statements')
        .selectAll()
        .where('policy_id', '=', policy.id)
        .orderBy('period_start_at')
        .execute();
      // What billed each journey, as clients read it: the statements' journey lists, and each journey's
      // statement_version_reference.
      const listed = await t.app.inject({
        url: `/statements?policy_reference=${reference}&limit=100`,
        headers: company.sandbox,
      });
      const listedStatements = listed.json<{
        statements: Array<{
          policy_version_reference: string;
          journeys: Array<{ journey_reference: string }>;
        }>;
      }>().statements;
      assert.equal(listedStatements.length, statements.length);
      const billedBy = new Map<string, string[]>();
      for (const st of listedStatements)
        for (const j of st.journeys)
          billedBy.set(j.journey_reference, [
            ...(billedBy.get(j.journey_reference) ?? []),
            st.policy_version_reference,
          ]);
      const journeyList = await t.app.inject({
        url: `/journeys?policy_reference=${reference}&limit=500`,
        headers: company.sandbox,
      });
      const references = new Map(
        journeyList
          .json<{
            journeys: Array<{ journey_reference: string; statement_version_reference: string | null }>;
          }>()
          .journeys.map((j) => [j.journey_reference, j.statement_version_reference]),
      );
      for (const row of rows) {
        const by = billedBy.get(row.id) ?? [];
        if (!row.is_void) assert.equal(by.length, 1, 'every non-void journey is billed exactly once');
        assert.ok(by.length <= 1, 'no journey is billed twice');
        assert.equal(references.get(row.id), by[0] ?? null, 'the journey names the statement that lists it');
      }
      for (const s of statements) {
        const billed = rows.filter((r) => billedBy.get(r.id)?.[0] === s.id);
        assert.equal(s.journey_count, billed.length);
        assert.equal(
          s.usage_premium_pence,
          billed.reduce((sum, r) => sum + r.usage_premium_pence, 0),
        );
        assert.equal(s.total_premium_pence, s.usage_premium_pence + s.subscription_premium_pence);
        assert.equal(
          s.billed_premium_pence,
          s.total_premium_pence - s.credits_used_pence + s.brought_forward_pence,
        );
        assert.ok(s.billed_premium_pence >= 0);
        assert.ok(s.carried_forward_pence === 0 || s.carried_forward_pence === s.billed_premium_pence);
      }
      for (let i = 1; i < statements.length; i++)
        assert.equal(
          statements[i]!.period_start_at.getTime(),
          statements[i - 1]!.period_end_at.getTime() + 1000,
        );
      // The ledger balances: credits granted − used − carried forward + brought forward = the balance,
      // below zero only by what the last statement carried forward (below the minimum charge).
      const ledger = await db
        .selectFrom('policy_credits')
        .select(['amount_pence', 'source'])
        .where('policy_id', '=', policy.id)
        .execute();
      const balance = ledger.reduce((sum, e) => sum + e.amount_pence, 0);
      const total = (key: 'credits_used_pence' | 'carried_forward_pence' | 'brought_forward_pence') =>
        statements.reduce((sum, s) => sum + s[key], 0);
      const granted = ledger
        .filter((e) => e.source !== 'statement' && e.source !== 'carried_forward')
        .reduce((sum, e) => sum + e.amount_pence, 0);
      assert.equal(
        balance,
        granted -
          total('credits_used_pence') -
          total('carried_forward_pence') +
          total('brought_forward_pence'),
      );
      assert.ok(balance >= -(statements.at(-1)?.carried_forward_pence ?? 0));
    }),
    { numRuns: 8 },
  );
});
