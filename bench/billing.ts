import fs from 'node:fs';
import os from 'node:os';
import { sql } from 'kysely';
import pg from 'pg';
import type { Executor } from '../src/schema.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { fixedClock } from '../src/platform/clock.ts';
import { withoutQueryTimeout } from '../src/platform/db/database.ts';
import { createLogger } from '../src/platform/logging.ts';
import { withScratchDatabase } from './support.ts';
import { asTenant } from '../src/modules/companies/index.ts';
import { seedPolicies } from '../src/seed.ts';

// The database phase of a billing run on PostgreSQL: N policies with 30 journeys each in the period
// (seeded by src/seed.ts, as `npm run cli -- seed --policies N --journeys 30` makes them), billed on
// one billing day (no cards on file, so no processor calls), then the same day again, which must
// write nothing; then N more whose product has daily and annual caps, billed the next day, the same
// way, so the two figures come from one run. Beside each run, the bare aggregation of the same journeys
// (one grouped scan of the period, no statement written) as the machine's baseline.
// `npm run bench -- billing [policies] [plain|capped|both|scored]` (default 100,000 and both; `billing 20000`
// is the quick look; at 1,000,000 `plain` halves the seeding). `scored` bills the capped set and then N more
// whose product also prices by driving score (their months scored by no trip: the cost of the reads).
/**
 * CPU seconds used so far by every PostgreSQL process on this machine (the server is local here): with
 * this process's own, where a run's time goes.
 */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      // utime and stime, the 14th and 15th fields, counted after the parenthesised command name.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between listing and reading.
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

/** Bytes of WAL PostgreSQL has written since it was created (a position to subtract). */
async function walPosition(db: Executor): Promise<number> {
  const result = await sql<{ lsn: string }>`select pg_current_wal_lsn() - '0/0' as lsn`.execute(db);
  return Number(result.rows[0]?.lsn);
}
const cpuCount = os.availableParallelism();

const policies = Number(process.argv[2] ?? process.env['BENCH_POLICIES'] ?? 100_000);
const sets = process.argv[3] ?? 'both';
if (!Number.isInteger(policies) || policies < 1 || !['plain', 'capped', 'both', 'scored'].includes(sets)) {
  process.stderr.write('usage: npm run bench -- billing [policies] [plain|capped|both|scored]\n');
  process.exit(64);
}
const JOURNEYS_A_POLICY = 30;
const base = process.env['BENCH_DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/test';
await withScratchDatabase(base, async (databaseUrl) => {
  // An interrupted run drops its database too (tens of gigabytes at a million policies): the finally of
  // withScratchDatabase does not run on a signal.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      const name = new URL(databaseUrl).pathname.slice(1);
      const admin = new pg.Client({ connectionString: base });
      void admin
        .connect()
        .then(() => admin.query(`drop database if exists "${name}" with (force)`))
        .finally(() => process.exit(130));
    });
  const clock = fixedClock('2025-07-01T03:00:00Z');
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ROLE: 'api',
    LOG_LEVEL: 'warn',
    ADMIN_API_KEY: 'b'.repeat(40),
  });
  const container = await createContainer(config, { clock, logger: createLogger('warn') });
  await container.start();
  const db = container.database.db;
  try {
    /**
     * A company's N policies, their terms starting on billing day `billingDay` of June 2025 (naming
     * `productReference`, registered first, when there is one), each with 30 journeys in its first
     * month, seeded as at the start of its first billing date.
     */
    async function seed(name: string, billingDay: number, productReference: string | null) {
      const company = await container.services.companies.create(name);
      if (productReference !== null) {
        const { id: companyId } = await db
          .selectFrom('companies')
          .select('id')
          .where('company_reference', '=', company.company_reference)
          .executeTakeFirstOrThrow();
        await container.services.products.create(asTenant(companyId, 'sandbox'), {
          product_reference: productReference,
          name: 'Capped pay-by-mile',
          usage_unit: 'mile',
          rules: {
            daily_cap_distance: 150,
            annual_cap_distance: 10_000,
            ...(productReference === 'scored'
              ? {
                  score_pricing: {
                    bands: [
                      { min_score: 90, adjustment_percent: -10 },
                      { min_score: 0, adjustment_percent: 0 },
                    ],
                    cap_percent: 10,
                  },
                }
              : {}),
          },
        });
      }
      const day = String(billingDay).padStart(2, '0');
      return seedPolicies(db, {
        policies,
        journeys: JOURNEYS_A_POLICY,
        companyReference: company.company_reference,
        startOn: `2025-06-${day}`,
        // London midnight of the billing date (BST): the month's journeys are all in the period billed.
        at: new Date(`2025-07-${day}T00:00:00+01:00`),
        ...(productReference === null ? {} : { productReference }),
      });
    }

    /**
     * The machine's baseline: the same journeys (this set's policies') read and summed per policy in
     * one grouped scan (what the statements' sums cost with nothing else), in seconds.
     */
    async function bareAggregation(billingDay: number): Promise<{ seconds: number; policies: number }> {
      const day = String(billingDay).padStart(2, '0');
      const t0 = performance.now();
      const result = await withoutQueryTimeout(() =>
        sql<{ n: string }>`
        select count(*) as n from (
          select j.policy_id, count(*), sum(j.distance_metres), sum(j.usage_premium_pence), sum(j.end_at - j.start_at)
          from journeys j
          where j.start_at >= ${`2025-06-${day}T00:00:00+01:00`}::timestamptz
            and j.start_at < ${`2025-07-${day}T00:00:00+01:00`}::timestamptz and not j.is_void
            and j.policy_id in (select id from policies where billing_day = ${billingDay})
          group by j.policy_id
        ) g`.execute(db),
      );
      return { seconds: (performance.now() - t0) / 1000, policies: Number(result.rows[0]?.n ?? 0) };
    }

    /**
     * Rows inserted, updated or deleted so far in each table of this database, by PostgreSQL's
     * statistics: the WAL position is the whole server's, which other databases move too. An idle
     * backend reports its counts within 10 s (PostgreSQL 15), so this waits that long first.
     */
    async function rowsWritten(): Promise<Map<string, number>> {
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      const result = await sql<{ name: string; n: string }>`
        select schemaname || '.' || relname as name, n_tup_ins + n_tup_upd + n_tup_del as n
        from pg_stat_all_tables where schemaname not in ('pg_catalog', 'pg_toast', 'information_schema')`.execute(
        db,
      );
      return new Map(result.rows.map((r) => [r.name, Number(r.n)]));
    }
    /** The tables whose counts moved between two readings, and by how much. */
    const written = (before: Map<string, number>, after: Map<string, number>): string => {
      const moved = [...after]
        .map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const)
        .filter(([, n]) => n !== 0);
      const list = (rows: typeof moved) => rows.map(([name, n]) => `${name} ${String(n)}`).join(', ');
      // pg-boss keeps its own bookkeeping (its maintenance time in pgboss.version) whatever runs.
      const jobs = moved.filter(([name]) => name.startsWith('pgboss.'));
      const service = moved.filter(([name]) => !name.startsWith('pgboss.'));
      return `${list(service) || 'none'}${jobs.length === 0 ? '' : ` (pg-boss's own bookkeeping: ${list(jobs)})`}`;
    };

    /** Bills one billing day, then the same day again, and reports both beside the bare aggregation. */
    async function bill(label: string, billingDay: number) {
      const date = `2025-07-${String(billingDay).padStart(2, '0')}`;
      const walBefore = await walPosition(db);
      const cpuBefore = { node: process.cpuUsage(), postgres: postgresCpuSeconds() };
      const t0 = performance.now();
      const first = await container.services.statements.runBillingDay(date);
      const firstSeconds = (performance.now() - t0) / 1000;
      const nodeCpu = process.cpuUsage(cpuBefore.node);
      const cpu = {
        node: (nodeCpu.user + nodeCpu.system) / 1e6,
        postgres: postgresCpuSeconds() - cpuBefore.postgres,
      };
      const walBytes = (await walPosition(db)) - walBefore;
      const peakRssMb = process.resourceUsage().maxRSS / 1024;
      // What autovacuum does next to a million new rows, done before the re-run, so that the server's
      // WAL meanwhile is the re-run's own.
      await withoutQueryTimeout(() => sql`vacuum analyze`.execute(db));
      await withoutQueryTimeout(() => sql`checkpoint`.execute(db));
      const rowsBefore = await rowsWritten();
      const walBeforeRerun = await walPosition(db);
      const t1 = performance.now();
      const second = await container.services.statements.runBillingDay(date);
      const secondSeconds = (performance.now() - t1) / 1000;
      const rerunWalBytes = (await walPosition(db)) - walBeforeRerun;
      const rerunRows = written(rowsBefore, await rowsWritten());
      const bare = await bareAggregation(billingDay);
      const billedJourneys = await sql<{ n: string }>`
        select coalesce(sum(journey_count), 0) as n from statements where billing_date = ${date}`.execute(db);
      process.stdout.write(
        `${label}: first run ${JSON.stringify({ ...first, failures: first.failures.length })} in ${firstSeconds.toFixed(2)} s → ${(policies / firstSeconds).toFixed(0)} policies/s; journeys billed ${String(billedJourneys.rows[0]?.n)} of ${String(policies * JOURNEYS_A_POLICY)}\n`,
      );
      process.stdout.write(
        `${label}: CPU this process ${cpu.node.toFixed(2)} s, PostgreSQL ${cpu.postgres.toFixed(2)} s (${String(cpuCount)} cores × ${firstSeconds.toFixed(2)} s); WAL ${(walBytes / 1e6).toFixed(0)} MB (${(walBytes / policies / 1000).toFixed(1)} kB a policy); peak RSS of this process so far ${peakRssMb.toFixed(0)} MB\n`,
      );
      process.stdout.write(
        `${label}: re-run ${JSON.stringify({ ...second, failures: second.failures.length })} in ${secondSeconds.toFixed(2)} s (${((100 * secondSeconds) / firstSeconds).toFixed(0)} % of the first; target ≤ 25 %): rows written in this database: ${rerunRows}, WAL of the whole server meanwhile ${String(rerunWalBytes)} bytes\n`,
      );
      process.stdout.write(
        `${label}: bare aggregation of the month's journeys (${String(bare.policies)} policies) ${bare.seconds.toFixed(2)} s: the run is ${(firstSeconds / bare.seconds).toFixed(1)} × it\n`,
      );
      return { policiesPerSecond: policies / firstSeconds, seconds: firstSeconds };
    }

    // Each set is billed right after it is seeded, so both runs find their month as freshly written
    // (billing the first set after seeding the second found it partly out of cache: 30 % slower).
    // Billing day 1 without a product; billing day 2 with a product of daily and annual caps.
    async function seedAndBill(name: string, billingDay: number, productReference: string | null) {
      const seedStart = performance.now();
      const seeded = await seed(name, billingDay, productReference);
      const seedSeconds = (performance.now() - seedStart) / 1000;
      // The month's journeys as autovacuum leaves them (migration 0014 has it visit journeys every 50,000
      // inserts): all-visible, so statements read their sums from the index alone.
      process.stdout.write(
        `seeded ${String(seeded.policies)} policies, ${String(seeded.journeys)} journeys in ${seedSeconds.toFixed(1)} s (${(seeded.journeys / seedSeconds).toFixed(0)} journeys/s with their policies; peak RSS of this process so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB)\n`,
      );
      // Minutes at a million policies: beyond the pool's query timeout.
      await withoutQueryTimeout(() => sql`vacuum analyze`.execute(db));
      // And the seeding's own dirty pages and WAL written out first, so the run does not pay for them.
      await withoutQueryTimeout(() => sql`checkpoint`.execute(db));
      process.stdout.write(
        `vacuumed and checkpointed in ${((performance.now() - seedStart) / 1000 - seedSeconds).toFixed(1)} s\n`,
      );
      clock.set(`2025-07-${String(billingDay).padStart(2, '0')}T03:00:00Z`);
      return bill(
        productReference === null
          ? 'without rules'
          : productReference === 'scored'
            ? 'caps and price by score'
            : 'daily and annual caps',
        billingDay,
      );
    }
    const plain = sets === 'capped' || sets === 'scored' ? undefined : await seedAndBill('Plain', 1, null);
    const capped = sets === 'plain' ? undefined : await seedAndBill('Capped', 2, 'capped');
    const scored = sets === 'scored' ? await seedAndBill('Scored', 3, 'scored') : undefined;
    const statements = await db
      .selectFrom('statements')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const sizes = await sql<{ name: string; bytes: string }>`
      select t.name, coalesce(
          (select sum(pg_total_relation_size(p.relid)) from pg_partition_tree(t.name::regclass) p),
          pg_total_relation_size(t.name::regclass)) as bytes
      from unnest(array['journeys', 'statements', 'policy_versions', 'policies', 'users', 'events',
        'outbox_emails']) as t(name)
      where to_regclass(t.name) is not null`.execute(db);
    process.stdout.write(
      `billing: ${plain === undefined ? '–' : plain.policiesPerSecond.toFixed(0)} policies/s without rules, ${capped === undefined ? '–' : capped.policiesPerSecond.toFixed(0)} with caps, ${scored === undefined ? '–' : scored.policiesPerSecond.toFixed(0)} with caps and price by score; statements ${String(statements.n)}\n`,
    );
    process.stdout.write(
      `sizes: ${sizes.rows.map((r) => `${r.name} ${(Number(r.bytes) / 1e6).toFixed(0)} MB`).join(', ')}; peak RSS of this process ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`,
    );
  } finally {
    await container.close();
  }
});
