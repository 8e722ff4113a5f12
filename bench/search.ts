/**
 * The back office's policy search (GET /admin/policies) on PostgreSQL with N seeded policies (default
 * 1,000,000), against the same SQL sent straight through pg in the same run: the baseline, so the
 * ratio is what the service adds (routing, admin auth, validation, serialisation) to the database's time.
 *
 *   npm run bench -- search [policies=1000000]
 *   BENCH_DATABASE_URL=postgres://user@host:5432/postgres npm run bench -- search 200000
 *
 * A fresh database is made on that server (default postgres://root@127.0.0.1:5432/postgres) and dropped
 * at the end. The service is migrated and started in this process and listens on a local port; the
 * policies come from src/seed.ts (set-based SQL), then VACUUM ANALYZE, as autovacuum would leave them.
 * Kinds of search, BENCH_SEARCHES times each (default 50; the per-policy kinds use a different policy
 * each time): a full reference, a four-letter reference prefix, a common and a rare surname, part of an
 * email, part of the email domain every policy shares, a registration with and without its space (and
 * in lower case), part of a postcode ("SW1A", "sw1a 1"). Per kind: p50, p95 and max in ms, through HTTP and through pg, and the ratio of the p50s.
 * Target: p95 < 100 ms through HTTP. BENCH_EXPLAIN=1 prints EXPLAIN (ANALYZE, BUFFERS) for each kind.
 */
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { searchPolicies } from '../src/modules/policies/index.ts';
import { createLogger } from '../src/platform/logging.ts';
import type { Database } from '../src/schema.ts';
import { seedPolicies } from '../src/seed.ts';
import { seededRandom, withScratchDatabase } from './support.ts';

const policies = Number(process.argv[2] ?? process.env['BENCH_POLICIES'] ?? 1_000_000);
const searches = Number(process.env['BENCH_SEARCHES'] ?? 50);
const explain = process.env['BENCH_EXPLAIN'] === '1';
const server = process.env['BENCH_DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres';
const ADMIN_API_KEY = 's'.repeat(40);
const TARGET_MS = 100;

if (!Number.isInteger(policies) || policies < 1)
  throw new Error(`policies must be ≥ 1 (got ${String(policies)})`);

interface Kind {
  readonly name: string;
  /** The `q` of each search, in order (one repeated, or one a policy). */
  readonly queries: readonly string[];
  /** Which policy must be in the answer, for kinds that name one. */
  readonly expected?: readonly string[];
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const summary = (timesMs: readonly number[]) => {
  const sorted = timesMs.toSorted((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.at(-1) ?? Number.NaN };
};
const ms = (value: number): string => value.toFixed(1).padStart(7);

await withScratchDatabase(server, async (databaseUrl) => {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ROLE: 'api',
    LOG_LEVEL: 'warn',
    ADMIN_API_KEY,
  });
  const container = await createContainer(config, { logger: createLogger('warn') });
  const app = await buildApp(container);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  container.setListeningUrl(url);
  await container.start();
  const db = container.database.db;
  const direct = new pg.Client({ connectionString: databaseUrl });
  await direct.connect();
  try {
    let lastReport = 0;
    const seeded = await seedPolicies(db, {
      policies,
      onProgress(done) {
        if (done - lastReport >= 100_000 || done === policies) {
          lastReport = done;
          process.stdout.write(`  seeded ${String(done)}\n`);
        }
      },
    });
    const vacuumStart = performance.now();
    await sql`vacuum analyze policies`.execute(db);
    await sql`vacuum analyze users`.execute(db);
    await sql`vacuum analyze policy_versions`.execute(db);
    const vacuumSeconds = (performance.now() - vacuumStart) / 1000;
    process.stdout.write(
      `seeded ${String(seeded.policies)} policies in ${seeded.seconds.toFixed(1)} s (${(seeded.policies / seeded.seconds).toFixed(0)} policies/s); vacuum analyze ${vacuumSeconds.toFixed(1)} s\n`,
    );
    const sizes = await sql<{ name: string; bytes: string }>`
      select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname in ('policies', 'policy_versions', 'users', 'policies_search',
        'policies_pkey', 'policies_reference_key', 'policies_tenant_idx', 'users_pkey')
      order by pg_relation_size(c.oid) desc`.execute(db);
    for (const row of sizes.rows)
      process.stdout.write(
        `  ${row.name.padEnd(24)} ${(Number(row.bytes) / 2 ** 20).toFixed(0).padStart(6)} MB\n`,
      );

    // The searched-for policies: BENCH_SEARCHES drawn with a seeded generator, the same every run.
    const sample = await sql<{
      reference: string;
      email: string;
      reg: string;
      postcode: string;
    }>`
      select p.policy_reference as reference, v.snapshot #>> '{proposer,email}' as email,
        v.snapshot #>> '{vehicle,reg}' as reg, v.snapshot #>> '{policy,address,postcode}' as postcode
      from policies p join policy_versions v on v.policy_id = p.id and v.sequence = 1
      where p.id = any(${await pickIds(db, searches)}::uuid[])`.execute(db);
    const targets = sample.rows;
    const rare = await sql<{ last_names: string }>`
      select last_names from users group by last_names order by count(*), last_names limit 1`.execute(db);
    const rareSurname = rare.rows[0]?.last_names ?? 'Featherstonehaugh';
    const repeat = (q: string) => Array.from({ length: searches }, () => q);
    const kinds: Kind[] = [
      {
        name: 'full reference',
        queries: targets.map((t) => t.reference),
        expected: targets.map((t) => t.reference),
      },
      { name: 'reference prefix (4)', queries: targets.map((t) => t.reference.slice(0, 4)) },
      { name: 'surname, common (smith)', queries: repeat('smith') },
      { name: `surname, rare (${rareSurname.toLowerCase()})`, queries: repeat(rareSurname.toLowerCase()) },
      {
        name: 'email fragment',
        queries: targets.map((t) => t.email.slice(2, t.email.indexOf('@') + 3)),
        expected: targets.map((t) => t.reference),
      },
      {
        name: 'reg with space',
        queries: targets.map((t) => t.reg),
        expected: targets.map((t) => t.reference),
      },
      {
        name: 'reg without space, lower',
        queries: targets.map((t) => t.reg.replace(' ', '').toLowerCase()),
        expected: targets.map((t) => t.reference),
      },
      // Every seeded email is at example.com, .org or .net, as most real ones are at a few domains.
      { name: 'email domain (exam)', queries: repeat('exam') },
      { name: 'postcode outward (SW1A)', queries: repeat('SW1A') },
      { name: 'postcode partial (sw1a 1)', queries: repeat('sw1a 1') },
    ];

    // The baseline's SQL: what searchPolicies sends, caught from a Kysely that logs its queries.
    let caught: CompiledQuery | undefined;
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    const catcher = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log(event) {
        caught = event.query;
      },
    });
    const compile = async (q: string): Promise<CompiledQuery> => {
      await searchPolicies(catcher, { q, limit: 25 });
      if (caught === undefined) throw new Error('searchPolicies sent no query');
      return caught;
    };

    const headers = { authorization: `Bearer ${ADMIN_API_KEY}` };
    const missed: string[] = [];
    process.stdout.write(
      `\n${'kind'.padEnd(34)} ${'http p50'.padStart(8)} ${'p95'.padStart(7)} ${'max'.padStart(7)}   ${'pg p50'.padStart(7)} ${'p95'.padStart(7)} ${'max'.padStart(7)}  ratio  rows\n`,
    );
    for (const kind of kinds) {
      const httpMs: number[] = [];
      const pgMs: number[] = [];
      let rows = 0;
      // One untimed search first: the first of a kind pays for planning and pages not yet read.
      await fetch(`${url}/admin/policies?q=${encodeURIComponent(kind.queries[0] ?? '')}`, { headers });
      for (const [k, q] of kind.queries.entries()) {
        const query = await compile(q);
        const t0 = performance.now();
        await direct.query(query.sql, [...query.parameters]);
        pgMs.push(performance.now() - t0);
        const t1 = performance.now();
        const response = await fetch(`${url}/admin/policies?q=${encodeURIComponent(q)}`, { headers });
        const body = (await response.json()) as { data?: Array<{ policy_reference: string }> };
        httpMs.push(performance.now() - t1);
        if (!response.ok || body.data === undefined)
          throw new Error(`${kind.name} ${q}: ${String(response.status)} ${JSON.stringify(body)}`);
        rows += body.data.length;
        const expected = kind.expected?.[k];
        if (expected !== undefined && !body.data.some((d) => d.policy_reference === expected))
          throw new Error(`${kind.name} ${q}: ${expected} not found`);
      }
      const http = summary(httpMs);
      const base = summary(pgMs);
      if (http.p95 >= TARGET_MS) missed.push(kind.name);
      process.stdout.write(
        `${kind.name.padEnd(34)} ${ms(http.p50)} ${ms(http.p95)} ${ms(http.max)}   ${ms(base.p50)} ${ms(base.p95)} ${ms(base.max)}  ${(http.p50 / base.p50).toFixed(2).padStart(5)}  ${(rows / kind.queries.length).toFixed(1)}\n`,
      );
      if (explain) {
        const query = await compile(kind.queries[0] ?? '');
        const plan = await direct.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${query.sql}`, [
          ...query.parameters,
        ]);
        process.stdout.write(`${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
      }
    }
    await catcher.destroy();
    process.stdout.write(
      missed.length === 0
        ? `search: every kind p95 < ${String(TARGET_MS)} ms at ${String(seeded.policies)} policies: ok\n`
        : `search: p95 ≥ ${String(TARGET_MS)} ms for ${missed.join(', ')}: BELOW TARGET\n`,
    );
  } finally {
    await direct.end();
    await app.close();
    await container.close();
  }
});

/** `count` policy ids spread over the table, the same every run for the same seed size. */
async function pickIds(db: Kysely<Database>, count: number): Promise<string[]> {
  const random = seededRandom(27);
  const total = await sql<{ n: string }>`select count(*) as n from policies`.execute(db);
  const size = Number(total.rows[0]?.n ?? 0);
  const offsets = Array.from({ length: count }, () => Math.floor(random() * size));
  const rows = await sql<{ id: string }>`
    select id from (select id, row_number() over (order by id) - 1 as k from policies) numbered
    where k = any(${offsets}::bigint[])`.execute(db);
  return rows.rows.map((r) => r.id);
}
