import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { BILLING_RUN_QUEUE } from '../../src/modules/statements/index.ts';
import { londonDate, londonMidnight } from '../../src/modules/statements/rules/statement-period.ts';
import { mapConcurrent } from '../../src/platform/concurrency.ts';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';
import { onPostgres } from '../support/database.ts';
import { seededRandom } from '../support/random.ts';
import { startBillingWorker } from './service-processes.ts';

/**
 * R1, exactly-once billing under races: four worker processes (ROLE=worker) share each billing day's
 * chunks while the API process runs the same day one to three more times (POST /admin/billing-runs),
 * and journeys keep arriving (late uploads) and being voided during the run. Each seed is one billing
 * day of a book of POLICIES card-paying policies spread over BILLING_DAYS days of the month; the
 * days are taken in calendar order over the last eleven months. After each run settles:
 * - one statement per policy billed that day, and the policy's periods continuous (each starts 1 s
 *   after the previous ends);
 * - at most one successful charge per statement, at the processor too, and every owing one charged;
 * - each statement's usage premium and journey count are those of the journeys it billed;
 * - a journey that missed its statement (uploaded as it was written) is billed by the next one.
 * The default run is 4 days of a book of 375 policies over 3 billing days (125 a day, one chunk): more
 * days than billing days, so at least one billing day comes round again and the journeys that missed
 * its statement are checked on the next. RELIABILITY_R1_POLICIES, RELIABILITY_R1_SEEDS (how many
 * days), RELIABILITY_R1_SEED (the first seed) replay or resize a run; RELIABILITY_LONG=1 runs 200 days
 * of a book of 1,000 policies over 28 billing days.
 */
const LONG = process.env['RELIABILITY_LONG'] === '1';
/** Billing days of the book: enough (day, month) pairs in eleven months for every seed. */
const BILLING_DAYS = LONG ? [...Array.from({ length: 28 }, (_, i) => i + 1)] : [1, 11, 22];
const POLICIES = Number(process.env['RELIABILITY_R1_POLICIES'] ?? (LONG ? 1000 : 125 * BILLING_DAYS.length));
const SEED_COUNT = Number(process.env['RELIABILITY_R1_SEEDS'] ?? (LONG ? 200 : 4));
const FIRST_SEED = Number(process.env['RELIABILITY_R1_SEED'] ?? Date.now() % 1_000_000);
const WORKERS = 4;
const ROUTE = encodePolyline([51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419], 5);

let t: TestApp;
let company: Awaited<ReturnType<typeof createCompany>>;
const workers: ChildProcess[] = [];
/** Policy references by billing day. */
const book = new Map<number, string[]>();
/** Journeys that missed a statement, by billing day: the next statement of that day must bill them. */
const missed = new Map<number, Set<string>>();
let companyId = '';

const ymd = (y: number, m: number, d: number) =>
  `${String(y)}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
const unix = (at: Date) => Math.floor(at.getTime() / 1000);

async function startWorker(): Promise<ChildProcess> {
  const child = await startBillingWorker(
    t.container.database.connectionString ?? '',
    t.container.gateways.sandboxBaseUrl() ?? '',
  );
  workers.push(child);
  return child;
}

/** The billing dates of the run: SEED_COUNT (day, month) pairs of the last eleven months, in calendar order. */
function billingDates(today: string): Array<{ date: string; day: number }> {
  const [y, m] = today.split('-').map(Number) as [number, number];
  const all: Array<{ date: string; day: number }> = [];
  for (let back = 10; back >= 0; back--) {
    const index = y * 12 + (m - 1) - back;
    for (const day of BILLING_DAYS) {
      const date = ymd(Math.floor(index / 12), (index % 12) + 1, day);
      if (date < today) all.push({ date, day });
    }
  }
  const next = seededRandom(FIRST_SEED);
  const chosen = all
    .map((item) => ({ item, key: next() }))
    .sort((a, b) => a.key - b.key)
    .slice(0, SEED_COUNT)
    .map(({ item }) => item);
  return chosen.sort((a, b) => a.date.localeCompare(b.date));
}

before(async () => {
  if (!onPostgres) return;
  t = await createTestApp({ listen: true });
  company = await createCompany(t.app, 'Race Mutual');
  const today = londonDate(new Date());
  const [y, m] = today.split('-').map(Number) as [number, number];
  const startIndex = y * 12 + (m - 1) - 11;
  const startAt = londonMidnight(ymd(Math.floor(startIndex / 12), (startIndex % 12) + 1, 1));
  const endAt = new Date(
    londonMidnight(ymd(Math.floor(startIndex / 12) + 1, (startIndex % 12) + 1, 1)).getTime() - 1000,
  );
  process.stdout.write(
    `# R1 billing race: ${String(POLICIES)} policies over billing days ${BILLING_DAYS.join(',')}, ${String(SEED_COUNT)} days, ${String(WORKERS)} workers, first seed ${String(FIRST_SEED)}\n`,
  );
  // The book: each policy bound with a card, billed monthly on its day, owing installments.
  await mapConcurrent(
    Array.from({ length: POLICIES }, (_, i) => i),
    16,
    async (i) => {
      const day = BILLING_DAYS[i % BILLING_DAYS.length] ?? 1;
      const { reference } = await make.cardPaidPolicy(t, company, {
        policy: {
          start_date: unix(startAt),
          end_date: unix(endAt),
          billing_day_date: day,
          inception_date: unix(startAt),
        },
        proposer: { email: `race${String(i)}@example.com` },
        pricing: { upfront_premium: 20, subscription_premium: 9.99, subscription_installments: 12 },
      });
      const list = book.get(day) ?? [];
      list.push(reference);
      book.set(day, list);
    },
  );
  for (let i = 0; i < WORKERS; i++) await startWorker();
});

after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  if (onPostgres) await t.close();
});

/**
 * Journeys of the period for some policies (one batch request per 1,000), 4 minutes long, at seeded
 * ten-minute slots before `before`, `minute` minutes into the slot: an upload's journeys never overlap
 * another upload's of the same day.
 */
async function upload(
  references: readonly string[],
  next: () => number,
  window: { from: Date; before: Date },
  tag: string,
  minute: number,
): Promise<string[]> {
  const slots = Math.floor((window.before.getTime() - window.from.getTime()) / 600_000) - 1;
  const items = references.map((reference) => {
    const at = window.from.getTime() + Math.floor(next() * slots) * 600_000 + minute * 60_000;
    return {
      policy_reference: reference,
      route: ROUTE,
      start_time: Math.floor(at / 1000),
      end_time: Math.floor(at / 1000) + 240,
      provider_reference: `${tag}:${reference}`,
    };
  });
  const stored: string[] = [];
  for (let i = 0; i < items.length; i += 1000) {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      headers: company.sandbox,
      payload: { journeys: items.slice(i, i + 1000) },
    });
    assert.equal(answer.statusCode, 200, answer.body);
    for (const result of answer.json<{
      results: Array<{ status: number; journey?: { journey_reference: string } }>;
    }>().results)
      if ((result.status === 201 || result.status === 200) && result.journey !== undefined)
        stored.push(result.journey.journey_reference);
  }
  return stored;
}

interface Settled {
  statements: number;
  owing: number;
  succeeded: number;
  pending: number;
}

async function settledState(date: string): Promise<Settled> {
  const periodEnd = new Date(londonMidnight(date).getTime() - 1000);
  const rows = await sql<Settled>`
    select count(*)::int as statements,
      count(*) filter (where s.billed_premium_pence > 0)::int as owing,
      count(p.id) filter (where p.status = 'succeeded')::int as succeeded,
      count(p.id) filter (where p.status = 'pending')::int as pending
    from statements s
    join policies pol on pol.id = s.policy_id and pol.company_id = ${companyId}
    left join payments p on p.policy_version_id = s.id and p.purpose = 'statement'
    where s.period_end_at = ${periodEnd}`.execute(t.container.database.db);
  return rows.rows[0] ?? { statements: 0, owing: 0, succeeded: 0, pending: 0 };
}

test(
  'four workers and the API racing over each billing day bill every policy once and charge it at most once',
  { skip: !onPostgres && 'PostgreSQL only: the workers run in processes of their own', timeout: 1_800_000 },
  async (context) => {
    const db = t.container.database.db;
    companyId = (await t.container.services.companies.tenantOf(company.company_reference, 'sandbox'))
      .companyId;
    const dates = billingDates(londonDate(new Date()));
    assert.equal(dates.length, SEED_COUNT, 'enough billing days in eleven months');
    for (const [round, { date, day }] of dates.entries()) {
      const seed = FIRST_SEED + round;
      const next = seededRandom(seed);
      const references = book.get(day) ?? [];
      const dayStart = londonMidnight(date);
      const window = { from: new Date(dayStart.getTime() - 20 * 86_400_000), before: dayStart };
      const some = (share: number) => references.filter(() => next() < share);
      const early = await upload(some(0.6), next, window, `early-${date}`, 0);
      const runs = 1 + Math.floor(next() * 3);
      const lateShare = 0.1 + next() * 0.2;
      const voidShare = next() * 0.1;
      context.diagnostic(
        `seed ${String(seed)}: ${date}, ${String(references.length)} policies, ${String(early.length)} journeys before, the API running it ${String(runs)} × beside the workers`,
      );
      await t.container.jobs.send(BILLING_RUN_QUEUE, { date });
      const racing = Array.from({ length: runs }, async () => {
        // Some runs start with the workers' chunks, some after: each seed races differently.
        await sleep(Math.floor(next() * 2500));
        const answer = await t.app.inject({
          method: 'POST',
          url: '/admin/billing-runs',
          headers: t.adminHeaders,
          payload: { date },
        });
        assert.equal(answer.statusCode, 200, answer.body);
        assert.deepEqual(answer.json<{ failures: unknown[] }>().failures, []);
      });
      // During the run: late uploads into the period being billed, and voids of journeys already there.
      // In five waves over the first two seconds of the run, each before or after its statement.
      const lateWaves = Array.from({ length: 5 }, () => some(lateShare / 5));
      const late = Promise.all(
        lateWaves.map(async (wave, i) => {
          await sleep(Math.floor(next() * 2000));
          return upload(wave, next, window, `late${String(i)}-${date}`, 5);
        }),
      ).then((waves) => waves.flat());
      const voids = mapConcurrent(
        early.filter(() => next() < voidShare),
        4,
        async (reference) => {
          await sleep(Math.floor(next() * 500));
          const answer = await t.app.inject({
            method: 'POST',
            url: `/journeys/${reference}/void`,
            headers: company.sandbox,
            payload: { reason: 'race' },
          });
          assert.equal(answer.statusCode, 200, answer.body);
        },
      );
      await Promise.all([...racing, voids]);
      const lateJourneys = await late;

      const started = Date.now();
      let state = await settledState(date);
      while (!(
        state.statements === references.length &&
        state.pending === 0 &&
        state.succeeded === state.owing
      )) {
        assert.ok(Date.now() - started < 180_000, `not settled in 180 s: ${JSON.stringify(state)}`);
        await sleep(200);
        state = await settledState(date);
      }
      const periodEnd = new Date(dayStart.getTime() - 1000);

      // One statement per policy, periods continuous.
      const statements = await sql<{ policy_reference: string; n: number }>`
        select pol.policy_reference, count(*)::int as n from statements s join policies pol on pol.id = s.policy_id
        where pol.company_id = ${companyId} and s.period_end_at = ${periodEnd} group by 1`.execute(db);
      assert.equal(statements.rows.length, references.length);
      assert.ok(
        statements.rows.every((r) => r.n === 1),
        'one statement per policy and period',
      );
      const gaps = await sql<{ n: number }>`
        select count(*)::int as n from (
          select period_start_at, lag(period_end_at) over (partition by policy_id order by period_start_at) as previous_end
          from statements s join policies pol on pol.id = s.policy_id where pol.company_id = ${companyId}) x
        where previous_end is not null and period_start_at <> previous_end + interval '1 second'`.execute(db);
      assert.equal(gaps.rows[0]?.n, 0, 'each period starts 1 s after the previous one ends');

      // At most one successful charge per statement, at the processor too.
      const charges = await sql<{ payments: number; twice: number; processor_twice: number }>`
        select
          (select count(*)::int from payments p join statements s on s.id = p.policy_version_id
            where s.period_end_at = ${periodEnd} and p.company_id = ${companyId} and p.purpose = 'statement') as payments,
          (select count(*)::int from (select p.policy_version_id from payments p
            where p.company_id = ${companyId} and p.purpose = 'statement' and p.status = 'succeeded'
            group by 1 having count(*) > 1) x) as twice,
          (select count(*)::int from (select o.data -> 'metadata' ->> 'milepost_payment' as payment
            from stripe_sandbox_objects o where o.type = 'payment_intent' and o.data ->> 'status' = 'succeeded'
              and o.data -> 'metadata' ->> 'milepost_payment' is not null
            group by 1 having count(*) > 1) y) as processor_twice`.execute(db);
      assert.deepEqual(
        charges.rows[0],
        { payments: state.owing, twice: 0, processor_twice: 0 },
        'one payment per owing statement, none paid twice, none charged twice at the processor',
      );

      // Each statement bills exactly its journeys: by the rule every reader uses (journey_statement:
      // a journey belongs to the statement whose period holds its start, unless it came late and a later
      // one claimed it), a journey voided after billing to the statement that billed it.
      const sums = await sql<{ n: number }>`
        select count(*)::int as n from statements s
        left join lateral (
          select coalesce(sum(j.usage_premium_pence), 0)::bigint as usage, count(j.id)::int as journeys
          from journeys j left join journey_voids v on v.journey_id = j.id
          where j.policy_id = s.policy_id
            and coalesce(journey_statement(j.statement_version_id, j.late, j.is_void, j.policy_id, j.start_at),
              v.billed_statement_version_id) = s.id) b on true
        where s.company_id = ${companyId} and s.period_end_at = ${periodEnd}
          and (s.usage_premium_pence <> b.usage or s.journey_count <> b.journeys)`.execute(db);
      assert.equal(sums.rows[0]?.n, 0, 'usage premium and journey count are those of the billed journeys');

      // Journeys stored before the run are billed by it, unless voided first.
      const unbilledEarly = await sql<{ id: string }>`
        select j.id from journeys j
        where j.id = any(${early}::uuid[]) and not j.is_void
          and journey_statement(j.statement_version_id, j.late, j.is_void, j.policy_id, j.start_at) is null`.execute(
        db,
      );
      assert.deepEqual(unbilledEarly.rows, [], 'every journey stored before the run is in its statement');

      // Journeys that came too late for last month's statement of this day are in this one; this month's wait.
      const previously = [...(missed.get(day) ?? [])];
      if (previously.length > 0) {
        const unbilled = await db
          .selectFrom('journeys')
          .select('id')
          .where('is_void', '=', false)
          .where('statement_version_id', 'is', null)
          .where('id', 'in', previously)
          .execute();
        assert.deepEqual(
          unbilled,
          [],
          'a journey that came too late for its statement is billed by the next',
        );
      }
      const nowMissed = await db
        .selectFrom('journeys')
        .select('id')
        .where('company_id', '=', companyId)
        .where('late', '=', true)
        .where('is_void', '=', false)
        .where('statement_version_id', 'is', null)
        .where('policy_reference', 'in', references)
        .execute();
      missed.set(day, new Set(nowMissed.map((r) => r.id)));
      context.diagnostic(
        `  settled in ${((Date.now() - started) / 1000).toFixed(1)} s: ${String(state.statements)} statements, ${String(state.succeeded)} charged, ${String(lateJourneys.length)} late uploads, ${String(nowMissed.length)} left for the next statement`,
      );
    }
  },
);
