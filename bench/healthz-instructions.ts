/**
 * GET /healthz as `bench healthz` runs it, counted in instructions instead of timed: each server runs
 * under valgrind's callgrind, is warmed up uninstrumented, and then counts the user-space instructions
 * it executes for a fixed number of requests. The counts repeat to within a few per cent from run to
 * run whatever else the machine is doing, where this machine's timed figures drift by tens of per
 * cent, so this is the figure to compare when changing the request path. The kernel's share of a
 * request (sockets, about half of its time here) is not counted and is the same for both servers, so
 * the ratio here is lower than the timed one.
 *
 *   npm run bench -- healthz-instructions   (BENCH_REQUESTS=3000; needs valgrind: apt-get install valgrind)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { BENCH_POSTGRES_URL, startServer, withScratchDatabase } from './support.ts';

const requests = Number(process.env['BENCH_REQUESTS'] ?? 3000);

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  process.stderr.write('healthz-instructions needs valgrind (apt-get install valgrind)\n');
  process.exit(69); // EX_UNAVAILABLE
}

/** Instructions a request, counted over `requests` requests after an uninstrumented warm-up. */
async function instructionsPerRequest(script: string, env: Record<string, string> = {}): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'milepost-callgrind-'));
  const server = await startServer(script, env, [
    'valgrind',
    '-q',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`,
  ]);
  try {
    const pid = String(server.child.pid);
    const url = `${server.url}/healthz`;
    await autocannon({ url, connections: 10, amount: 2000 }); // tiers the code up, uncounted
    execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
    const result = await autocannon({ url, connections: 10, amount: requests });
    if (result.non2xx + result.errors > 0) throw new Error(`${script}: failed requests`);
    execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
    // The dump holds the counts since instrumentation went on: its "summary:" line is their total.
    const dump = fs.readFileSync(path.join(dir, 'callgrind.out.1'), 'utf8');
    const total = Number(/^summary: (\d+)$/m.exec(dump)?.[1]);
    if (!Number.isFinite(total)) throw new Error(`${script}: no summary in the callgrind dump`);
    return total / requests;
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const bare = await instructionsPerRequest('servers/bare-hello.ts');
const line = (label: string, perRequest: number) =>
  `${label.padEnd(22)} ${Math.round(perRequest).toLocaleString('en-GB').padStart(9)} instructions a request  ratio ${(bare / perRequest).toFixed(3)}\n`;
process.stdout.write(line('bare Fastify', bare));
await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
  process.stdout.write(
    line('milepost, PostgreSQL', await instructionsPerRequest('servers/milepost.ts', { DATABASE_URL })),
  );
});
process.stdout.write(line('milepost, PGlite', await instructionsPerRequest('servers/milepost.ts')));
