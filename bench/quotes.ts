/**
 * POST /quotes through the full stack (client authentication, validation, the rate book in force read
 * from PostgreSQL, rating, underwriting, the quote stored with its breakdown) against a bare Fastify
 * route that reads the same rate tables from the same database and rates with the same rules, in the
 * same run.
 *
 *   npm run bench -- quotes   (BENCH_BLOCKS=4 blocks of BENCH_SECONDS=3 s phases, BENCH_CONNECTIONS=8,
 *                              BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/postgres)
 *
 * Both servers run side by side on one scratch database and are loaded in turn, in mirrored blocks
 * (bare, ours, ours, bare) so this machine's drift falls on both alike. Each phase keeps
 * BENCH_CONNECTIONS requests in flight and records every request's latency. Reported: quotes per
 * second of each, their ratio (target ≥ 0.8) and Milepost's p95 latency (target ≤ 30 ms), and the CPU
 * each quote took in the server's process and in PostgreSQL's backends (on Linux, with the database on
 * this machine): what the rates come from, and far steadier than they are on a loaded machine.
 * PostgreSQL only: the baseline must read the same tables, which an embedded database in another
 * process cannot share.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { EXAMPLE_QUOTE_INPUT } from '../src/modules/rating/rules/index.ts';
import {
  BENCH_POSTGRES_URL,
  backendCpuSeconds,
  backendCpuSpent,
  processCpuSeconds,
  startServer,
  withScratchDatabase,
} from './support.ts';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 3);
const blocks = Number(process.env['BENCH_BLOCKS'] ?? 4);
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 8);
const TARGET_RATIO = 0.8;
const TARGET_P95_MS = 30;

interface Phase {
  readonly count: number;
  readonly errors: number;
  readonly latenciesMs: number[];
  readonly seconds: number;
  /** CPU seconds the server's process and the database's backends used in the phase (NaN: unknown). */
  readonly serverCpu: number;
  readonly databaseCpu: number;
}

/**
 * `connections` loops posting `body` to `server` for `duration` seconds; every answer must be 2xx. Each
 * phase loads one server, so the backends that work during it are that server's pool's.
 */
async function phase(
  server: { url: string; child: { pid?: number | undefined } },
  headers: Record<string, string>,
  body: string,
  duration: number,
  database: pg.Client,
): Promise<Phase> {
  const url = `${server.url}/quotes`;
  const latenciesMs: number[] = [];
  let errors = 0;
  const backendsBefore = await backendCpuSeconds(database);
  const serverBefore = processCpuSeconds(server.child.pid);
  const started = performance.now();
  const endAt = started + duration * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < endAt) {
        const t0 = performance.now();
        const answer = await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        });
        await answer.arrayBuffer();
        latenciesMs.push(performance.now() - t0);
        if (answer.status >= 300) errors += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const serverCpu = processCpuSeconds(server.child.pid) - serverBefore;
  const databaseCpu = backendCpuSpent(backendsBefore, await backendCpuSeconds(database));
  return { count: latenciesMs.length, errors, latenciesMs, seconds, serverCpu, databaseCpu };
}

/** CPU milliseconds a quote took, over the phases. */
const cpuPerQuoteMs = (phases: readonly Phase[], of: 'serverCpu' | 'databaseCpu') =>
  (1000 * phases.reduce((s, p) => s + p[of], 0)) / phases.reduce((n, p) => n + p.count, 0);

const perSecond = (phases: readonly Phase[]) =>
  phases.reduce((n, p) => n + p.count, 0) / phases.reduce((s, p) => s + p.seconds, 0);
const percentile = (phases: readonly Phase[], q: number) => {
  const all = phases.flatMap((p) => p.latenciesMs).sort((a, b) => a - b);
  return all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? 0;
};

await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
  const seedFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-quotes-')), 'seed.json');
  const ours = await startServer('servers/quotes-milepost.ts', { DATABASE_URL, BENCH_SEED_FILE: seedFile });
  const bare = await startServer('servers/quotes-bare.ts', { DATABASE_URL });
  const headers = JSON.parse(await fs.readFile(seedFile, 'utf8')) as Record<string, string>;
  const start = Math.floor(Date.now() / 1000) + 86_400;
  const body = JSON.stringify({
    ...EXAMPLE_QUOTE_INPUT,
    policy: { ...EXAMPLE_QUOTE_INPUT.policy, start_date: start, end_date: start + 365 * 86_400 - 1 },
  });
  const phases: Record<'ours' | 'bare', Phase[]> = { ours: [], bare: [] };
  const database = new pg.Client({ connectionString: DATABASE_URL });
  await database.connect();
  try {
    await phase(ours, headers, body, 2, database); // warm-up
    await phase(bare, {}, body, 2, database);
    for (let block = 0; block < blocks; block++)
      for (const turn of ['bare', 'ours', 'ours', 'bare'] as const)
        phases[turn].push(
          await phase(turn === 'ours' ? ours : bare, turn === 'ours' ? headers : {}, body, seconds, database),
        );
  } finally {
    await database.end();
    await ours.stop();
    await bare.stop();
  }
  const oursRate = perSecond(phases.ours);
  const bareRate = perSecond(phases.bare);
  const errors = [...phases.ours, ...phases.bare].reduce((n, p) => n + p.errors, 0);
  const p95 = percentile(phases.ours, 0.95);
  const line = (label: string, rate: number, list: Phase[]) =>
    `${label.padEnd(9)} ${rate.toFixed(0).padStart(6)} quotes/s  p50 ${percentile(list, 0.5).toFixed(1)} ms  p95 ${percentile(list, 0.95).toFixed(1)} ms  p99 ${percentile(list, 0.99).toFixed(1)} ms  CPU a quote: server ${cpuPerQuoteMs(list, 'serverCpu').toFixed(2)} ms, PostgreSQL ${cpuPerQuoteMs(list, 'databaseCpu').toFixed(2)} ms`;
  process.stdout.write(
    `${line('milepost', oursRate, phases.ours)}\n${line('baseline', bareRate, phases.bare)}\n`,
  );
  const ratio = oursRate / bareRate;
  process.stdout.write(
    `quotes (PostgreSQL, ${String(connections)} in flight): ratio ${ratio.toFixed(2)} (target ≥ ${String(TARGET_RATIO)}) ${ratio >= TARGET_RATIO ? 'ok' : 'BELOW TARGET'}; p95 ${p95.toFixed(1)} ms (target ≤ ${String(TARGET_P95_MS)} ms) ${p95 <= TARGET_P95_MS ? 'ok' : 'ABOVE TARGET'}; errors ${String(errors)}\n`,
  );
});
