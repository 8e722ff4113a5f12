/**
 * The premium bordereau (GET /admin/reports/bordereau) on PostgreSQL for a month of N versions
 * (default 1,000,000): rows/s through HTTP and the process's peak RSS, against the bare SQL read of
 * the same rows in the same run (the report's batches sent straight through pg): the ratio is what the
 * service adds (computing each row's money, CSV or JSON text, HTTP) to the database's time.
 *
 *   npm run bench -- bordereau [--rows N]
 *   BENCH_DATABASE_URL=postgres://user@host:5432/postgres npm run bench -- bordereau --rows 100000
 *
 * A fresh database is made on that server (default postgres://root@127.0.0.1:5432/postgres) and dropped
 * at the end. The month is March 2026 (the clocks change in it): N/2 policies whose terms start on its
 * days, each with its `nb` version and its March statement (an `st` version at the month's last second,
 * with a capped day on some, free distance or a credit on others), written by src/seed.ts, then VACUUM
 * ANALYZE. The service runs in a process of its own (bench/servers/milepost.ts, as `npm start` runs it),
 * so that its RSS (sampled every 20 ms from /proc) is the service's alone; this process reads each body
 * and drops it as it arrives (lines counted), asking for no compression. Targets: ≥ 100,000 rows/s
 * and ≤ 150 MB peak RSS.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { createLogger } from '../src/platform/logging.ts';
import { londonMidnight } from '../src/platform/london-calendar.ts';
import { asTenant } from '../src/modules/companies/index.ts';
import { readBordereauBatch } from '../src/modules/reports/bordereau-repository.ts';
import { BORDEREAU_BATCH_ROWS } from '../src/modules/reports/bordereau-routes.ts';
import type { Database } from '../src/schema.ts';
import { seedPolicies } from '../src/seed.ts';
import { startServer, withScratchDatabase } from './support.ts';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rows: { type: 'string' } },
  allowPositionals: true,
});
const rows = Number(values.rows ?? process.env['BENCH_ROWS'] ?? 1_000_000);
const server = process.env['BENCH_DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres';
const ADMIN_API_KEY = 'b'.repeat(40);
const MONTH = '2026-03';
const TARGET_ROWS_PER_SECOND = 100_000;
const TARGET_RSS_MB = 150;

if (!Number.isInteger(rows) || rows < 2)
  throw new Error(`--rows must be a whole number ≥ 2 (got ${String(rows)})`);

const mb = (bytes: number) => bytes / 2 ** 20;
const rate = (n: number, seconds: number) => Math.round(n / seconds).toLocaleString('en-GB');

/** A process's resident set and its high-water mark, from /proc (Linux), in bytes. */
function memoryOf(pid: number): { rssBytes: number; hwmBytes: number } {
  const status = fs.readFileSync(`/proc/${String(pid)}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM') };
}

/** The server's peak RSS while `work` runs, sampled every 20 ms. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakRssBytes: number }> {
  let peak = memoryOf(pid).rssBytes;
  const timer = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid).rssBytes);
  }, 20);
  try {
    const result = await work();
    return { result, peakRssBytes: Math.max(peak, memoryOf(pid).rssBytes) };
  } finally {
    clearInterval(timer);
  }
}

await withScratchDatabase(server, async (databaseUrl) => {
  const config = loadConfig({ DATABASE_URL: databaseUrl, ROLE: 'api', LOG_LEVEL: 'warn', ADMIN_API_KEY });
  // This process's container migrates the database and seeds it; the server is started after.
  const container = await createContainer(config, { logger: createLogger('warn') });
  const db = container.database.db;
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  const direct = new pg.Client({ connectionString: databaseUrl });
  await direct.connect();
  // As the report's batches run (bordereau-repository.ts): serial plans.
  await direct.query('set max_parallel_workers_per_gather = 0');
  try {
    let lastReport = 0;
    const policies = Math.floor(rows / 2);
    const seeded = await seedPolicies(db, {
      policies,
      environment: 'production',
      startMonth: MONTH,
      monthStatements: true,
      onProgress(done) {
        if (done - lastReport >= 100_000 || done === policies) {
          lastReport = done;
          process.stdout.write(`  seeded ${String(done)} policies\n`);
        }
      },
    });
    for (const table of ['policies', 'policy_versions', 'statements'])
      await sql`vacuum analyze ${sql.table(table)}`.execute(db);
    const company = await db
      .selectFrom('companies')
      .select('id')
      .where('company_reference', '=', seeded.companyReference)
      .executeTakeFirstOrThrow();
    const expected = seeded.policies * 2;
    server = await startServer('servers/milepost.ts', {
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY,
      LOG_LEVEL: 'warn',
    });
    const url = server.url;
    const serverPid = server.child.pid ?? 0;
    process.stdout.write(
      `seeded ${String(seeded.policies)} policies (${String(expected)} versions in ${MONTH}) in ${seeded.seconds.toFixed(1)} s\n`,
    );

    // The baseline: the report's own batches, compiled by a Kysely that only logs, sent through pg.
    const caught: { query?: CompiledQuery } = {};
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    const catcher = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log(event) {
        if (event.query.sql.includes('from policy_versions v')) caught.query = event.query;
      },
    });
    const lastCaught = (): CompiledQuery | undefined => caught.query;
    const scope = {
      tenant: asTenant(company.id, 'production'),
      fromAt: londonMidnight(`${MONTH}-01`),
      toAt: londonMidnight('2026-04-01'),
    };
    const compile = async (after: { effectiveMicroseconds: number; id: string } | null) => {
      delete caught.query;
      await readBordereauBatch(catcher, scope, after, BORDEREAU_BATCH_ROWS).catch(() => undefined);
      const query = lastCaught();
      if (query === undefined) throw new Error('readBordereauBatch sent no query');
      return query;
    };
    const first = await compile(null);
    const SENTINEL = {
      effectiveMicroseconds: 946_684_800_000_000,
      id: '00000000-0000-4000-8000-000000000000',
    };
    const next = await compile(SENTINEL);
    const atIndex = next.parameters.indexOf(SENTINEL.effectiveMicroseconds);
    const idIndex = next.parameters.indexOf(SENTINEL.id);
    await catcher.destroy();

    const baseline = async (): Promise<number> => {
      let count = 0;
      let cursor: { at: number; id: string } | null = null;
      for (;;) {
        const query: CompiledQuery = cursor === null ? first : next;
        const parameters = [...query.parameters];
        if (cursor !== null) {
          parameters[atIndex] = cursor.at;
          parameters[idIndex] = cursor.id;
        }
        const result = await direct.query<{ id: string; effective_us: number }>(query.sql, parameters);
        count += result.rows.length;
        const last = result.rows.at(-1);
        if (last === undefined || result.rows.length < BORDEREAU_BATCH_ROWS) return count;
        cursor = { at: last.effective_us, id: last.id };
      }
    };

    const report = async (format: 'csv' | 'json') => {
      const response = await fetch(
        `${url}/admin/reports/bordereau?company_reference=${seeded.companyReference}&environment=production&month=${MONTH}&format=${format}`,
        { headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'accept-encoding': 'identity' } },
      );
      if (!response.ok || response.body === null)
        throw new Error(`bordereau answered ${String(response.status)}: ${await response.text()}`);
      let bytes = 0;
      let newlines = 0;
      let tail = '';
      const decoder = new TextDecoder();
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value: chunk } = await reader.read();
        if (done) break;
        bytes += chunk.byteLength;
        // CSV: a record a line (no text here holds a line break); JSON: a row an object in `rows`.
        for (let i = 0; i < chunk.length; i++) if (chunk[i] === (format === 'csv' ? 10 : 123)) newlines++;
        tail = (tail + decoder.decode(chunk, { stream: true })).slice(-400);
      }
      // CSV: header + rows + TOTAL; JSON: `{` of the document, of each row and of the totals.
      const counted = newlines - 2;
      if (counted !== expected)
        throw new Error(`${format}: ${String(counted)} rows, expected ${String(expected)}`);
      if (format === 'csv' && !tail.includes('\nTOTAL,')) throw new Error('csv: no TOTAL line');
      return { bytes, counted };
    };

    const results: string[] = [];
    const timed = async <T>(work: () => Promise<T>) => {
      const t0 = performance.now();
      const { result, peakRssBytes } = await sampled(serverPid, work);
      return { result, seconds: (performance.now() - t0) / 1000, peakRssBytes };
    };
    // One untimed pass first: the month's pages into the cache, as for a second reader of the month.
    await baseline();
    // One small request first, so that the idle figure is of a server that has answered.
    await fetch(`${url}/healthz`);
    const idle = memoryOf(serverPid);
    const pgRun = await timed(baseline);
    const csvRun = await timed(() => report('csv'));
    const jsonRun = await timed(() => report('json'));
    const pgAgain = await timed(baseline);
    const pgRowsPerSecond = pgRun.result / Math.min(pgRun.seconds, pgAgain.seconds);
    for (const [name, run] of [
      ['csv', csvRun],
      ['json', jsonRun],
    ] as const) {
      const rowsPerSecond = expected / run.seconds;
      results.push(
        `${name.padEnd(5)} ${rate(expected, run.seconds).padStart(9)} rows/s  ${run.seconds.toFixed(1).padStart(5)} s  ${mb(run.result.bytes).toFixed(0).padStart(5)} MB body  peak RSS ${mb(run.peakRssBytes).toFixed(0)} MB (+${mb(run.peakRssBytes - idle.rssBytes).toFixed(0)} over idle)  ratio to pg ${(rowsPerSecond / pgRowsPerSecond).toFixed(2)}` +
          `  ${rowsPerSecond >= TARGET_ROWS_PER_SECOND && mb(run.peakRssBytes) <= TARGET_RSS_MB ? 'ok' : 'BELOW TARGET'}`,
      );
    }
    process.stdout.write(
      `\nbordereau of ${String(expected)} rows (${MONTH}), batches of ${String(BORDEREAU_BATCH_ROWS)}; server RSS idle ${mb(idle.rssBytes).toFixed(0)} MB\n` +
        `pg    ${rate(pgRun.result, pgRun.seconds).padStart(9)} rows/s  ${pgRun.seconds.toFixed(1).padStart(5)} s  (again ${rate(pgAgain.result, pgAgain.seconds)} rows/s)\n` +
        `${results.join('\n')}\n` +
        `server RSS high-water mark (start-up included) ${mb(memoryOf(serverPid).hwmBytes).toFixed(0)} MB; targets ≥ ${TARGET_ROWS_PER_SECOND.toLocaleString('en-GB')} rows/s, ≤ ${String(TARGET_RSS_MB)} MB\n`,
    );
  } finally {
    await direct.end();
    await server?.stop();
    await container.close();
  }
});
