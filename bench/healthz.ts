/**
 * GET /healthz through the full stack (every plugin and hook, the logger at warn) against a bare
 * Fastify hello-world, in the same run, on PostgreSQL and then on embedded PGlite.
 *
 *   npm run bench -- healthz      (BENCH_SECONDS=5 per phase, BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/postgres)
 *
 * Each storage runs against its own baseline: both servers up side by side, loaded in turn (bare, ours,
 * ours, bare, bare, ours), since this machine's speed drifts by tens of per cent over a minute and
 * alternating lets the drift fall on both alike. The target (≥ 0.9, DESIGN §5: PostgreSQL on the same
 * machine) applies to PostgreSQL; the PGlite ratio is printed beside it.
 */
import {
  BENCH_POSTGRES_URL,
  combined,
  load,
  report,
  startServer,
  withScratchDatabase,
  type LoadResult,
} from './support.ts';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 5);
const TARGET_RATIO = 0.9;

async function compare(label: string, env: Record<string, string>): Promise<void> {
  const ours = await startServer('servers/milepost.ts', env);
  const bare = await startServer('servers/bare-hello.ts');
  const phases: Record<'ours' | 'bare', LoadResult[]> = { ours: [], bare: [] };
  try {
    for (const server of [ours, bare]) await load({ url: `${server.url}/healthz`, duration: 3 }); // warm-up
    for (const turn of ['bare', 'ours', 'ours', 'bare', 'bare', 'ours'] as const) {
      const server = turn === 'ours' ? ours : bare;
      phases[turn].push(await load({ url: `${server.url}/healthz`, duration: seconds }));
    }
  } finally {
    await ours.stop();
    await bare.stop();
  }
  process.stdout.write(`${label}\n`);
  report(`healthz (${label})`, combined(phases.ours), combined(phases.bare), TARGET_RATIO);
}

await withScratchDatabase(BENCH_POSTGRES_URL, (DATABASE_URL) => compare('PostgreSQL', { DATABASE_URL }));
await compare('PGlite', {});
