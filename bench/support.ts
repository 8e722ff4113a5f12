import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import autocannon from 'autocannon';

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly non2xx: number;
}

/**
 * Starts a server script in its own process (so the load generator and the server do not share a
 * core) and resolves with its base URL, which the script prints as its first stdout line.
 */
export async function startServer(
  script: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  // BENCH_PROFILE=<dir>: each server writes a V8 CPU profile there when it stops (open it in Chrome's
  // DevTools); NODE_OPTIONS may not carry --cpu-prof.
  const profile = process.env['BENCH_PROFILE'];
  const flags = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  const child = spawn(process.execPath, [...flags, path.resolve(import.meta.dirname, script)], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`${script} exited with ${String(code)} before it listened`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('http://'));
      if (line !== undefined) resolve(line.trim());
    });
  });
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

export async function load(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 50, pipelining: 1, duration: 8, ...options });
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function report(name: string, ours: LoadResult, baseline: LoadResult, target: number): void {
  const ratio = ours.requestsPerSecond / baseline.requestsPerSecond;
  const line = (label: string, r: LoadResult) =>
    `${label.padEnd(9)} ${r.requestsPerSecond.toFixed(0).padStart(7)} req/s  p99 ${r.p99Ms.toFixed(1)} ms  errors ${r.errors}  non-2xx ${r.non2xx}`;
  process.stdout.write(`${line('milepost', ours)}\n${line('baseline', baseline)}\n`);
  process.stdout.write(
    `${name}: ratio ${ratio.toFixed(2)} (target ≥ ${target}) ${ratio >= target ? 'ok' : 'BELOW TARGET'}\n`,
  );
}
