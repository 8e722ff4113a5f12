import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { freePort } from '../../support/free-port.ts';
import { embeddedOnly } from '../../support/database.ts';

/**
 * The README's five-minute tour, run as written: its shell blocks, in order, against a service started
 * as `npm start` starts it, on a fresh embedded data directory. Only the address is changed (a free
 * port, not 3000). A tour that no longer works fails here, not in a newcomer's terminal.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
let workdir: string | undefined;
let service: ChildProcess | undefined;
let base: string;

before(async () => {
  if (embeddedOnly !== false) return;
  workdir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-tour-'));
  const port = await freePort();
  base = `http://127.0.0.1:${String(port)}`;
  service = spawn(process.execPath, [path.join(ROOT, 'src/main.ts')], {
    cwd: workdir,
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  service.stderr?.resume();
  // A new embedded database is migrated first: tens of seconds on a loaded two-core machine.
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    assert.ok(Date.now() < deadline, 'the service did not start');
    await sleep(100);
  }
});

after(async () => {
  if (service !== undefined) {
    service.kill('SIGTERM');
    await once(service, 'exit');
  }
  if (workdir !== undefined) await fs.rm(workdir, { recursive: true, force: true });
});

test(
  'the README tour runs as written and ends with a statement charged to the card',
  { skip: embeddedOnly },
  async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const tour = readme.slice(readme.indexOf('## A five-minute tour'), readme.indexOf('## Where to go next'));
    const blocks = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    assert.ok(blocks.length >= 5, 'the tour has its steps');
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll('http://127.0.0.1:3000', base);
    const output = await new Promise<string>((resolve, reject) => {
      execFile('bash', ['-c', script], { cwd: workdir, timeout: 60_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      });
    });
    assert.match(output, /policy [a-z]+-[a-z]+-[a-z]+/);
    assert.match(output, /"type":"PASSWORD_RESET"/);
    assert.match(output, /"payment_amount":\d+(\.\d+)?\}/);
    assert.doesNotMatch(output, /"payment_amount":null/);
    assert.match(
      output,
      /^tour-dongle\n[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/m,
      'the crash is stored',
    );
  },
);
