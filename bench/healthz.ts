/**
 * GET /healthz through the full stack (every plugin and hook, the logger at warn) against a bare
 * Fastify hello-world, in the same run, on PostgreSQL and then on embedded PGlite.
 *
 *   npm run bench -- healthz   (BENCH_BLOCKS=8 blocks of BENCH_SECONDS=2 s phases,
 *                               BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/postgres)
 *
 * Each storage runs against its own baseline, both servers up side by side and loaded in turn, in
 * blocks of four short phases (bare, ours, ours, bare). This machine's speed drifts: the same server's
 * CPU time per request moved by 40 % between two phases 20 s apart. Short phases in mirrored blocks let
 * the drift fall on both servers alike; the ratio is that of the two servers' mean rates over all
 * blocks, and the lowest and highest block ratios are printed beside it to show the noise. The target
 * (≥ 0.9, DESIGN §5: PostgreSQL on the same machine) applies to PostgreSQL; the PGlite ratio is printed
 * beside it.
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

const seconds = Number(process.env['BENCH_SECONDS'] ?? 2);
const blocks = Number(process.env['BENCH_BLOCKS'] ?? 8);
const TARGET_RATIO = 0.9;

async function compare(label: string, env: Record<string, string>): Promise<void> {
  const ours = await startServer('servers/milepost.ts', env);
  const bare = await startServer('servers/bare-hello.ts');
  const phases: Record<'ours' | 'bare', LoadResult[]> = { ours: [], bare: [] };
  try {
    for (const server of [ours, bare]) await load({ url: `${server.url}/healthz`, duration: 3 }); // warm-up
    for (let block = 0; block < blocks; block++)
      for (const turn of ['bare', 'ours', 'ours', 'bare'] as const) {
        const server = turn === 'ours' ? ours : bare;
        phases[turn].push(await load({ url: `${server.url}/healthz`, duration: seconds }));
      }
  } finally {
    await ours.stop();
    await bare.stop();
  }
  const blockRatios = Array.from({ length: blocks }, (_, block) => {
    const rate = (list: LoadResult[]) => combined(list.slice(2 * block, 2 * block + 2)).requestsPerSecond;
    return rate(phases.ours) / rate(phases.bare);
  });
  process.stdout.write(
    `${label}: ${blocks} blocks, ratio per block ${Math.min(...blockRatios).toFixed(2)}–${Math.max(...blockRatios).toFixed(2)}\n`,
  );
  report(`healthz (${label})`, combined(phases.ours), combined(phases.bare), TARGET_RATIO);
}

await withScratchDatabase(BENCH_POSTGRES_URL, (DATABASE_URL) => compare('PostgreSQL', { DATABASE_URL }));
await compare('PGlite', {});
