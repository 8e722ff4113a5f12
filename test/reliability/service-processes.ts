import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_ADMIN_KEY } from '../support/app.ts';
import { freePort } from '../support/free-port.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';

/** The real service started as a child process (`node src/main.ts`), as an operator runs it. */
const MAIN = path.resolve(import.meta.dirname, '../../src/main.ts');

/** The child's environment starts from PATH and the test run's compile cache (its starts are many). */
const BASE_ENV = {
  PATH: process.env['PATH'] ?? '',
  ...(process.env['NODE_COMPILE_CACHE'] === undefined
    ? {}
    : { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] }),
};

export interface Service {
  readonly base: string;
  readonly child: ChildProcess;
  exited(): boolean;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startService(
  role: 'all' | 'api' | 'worker',
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...BASE_ENV,
      ROLE: role,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let exited = false;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  child.once('exit', (code, signal) => {
    exited = true;
    if (code !== 0 && signal !== 'SIGKILL' && signal !== 'SIGTERM')
      process.stderr.write(`service (${role}) exited ${String(code)}: ${stderr.slice(-3000)}\n`);
  });
  const base = `http://127.0.0.1:${String(port)}`;
  // A new database is migrated first: on a loaded two-core machine that takes tens of seconds.
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() >= deadline || child.exitCode !== null || child.signalCode !== null) {
      // A process left running would keep the test file from ever ending.
      child.kill('SIGKILL');
      assert.fail(`the service did not start: ${stderr.slice(-3000)}`);
    }
    await sleep(50);
  }
  return {
    base,
    child,
    exited: () => exited,
    stderr: () => stderr,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Record<string, unknown>;
  readonly durationMs: number;
}

/** One HTTP exchange, bounded: a request that gets no answer within `timeoutMs` throws. */
export async function call(
  base: string,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: unknown,
  timeoutMs = 30_000,
): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: parsed,
    durationMs: Date.now() - started,
  };
}

export interface CompanyHeaders {
  readonly client_id: string;
  readonly client_secret: string;
  [name: string]: string;
}

export async function createCompany(base: string, name: string): Promise<CompanyHeaders> {
  const company = await call(
    base,
    'POST',
    '/admin/companies',
    { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    {
      name,
    },
  );
  assert.equal(company.status, 201, JSON.stringify(company.body));
  return {
    client_id: company.body['client_id'] as string,
    client_secret: company.body['client_secret_sandbox'] as string,
  };
}

/** The welcome email for `email`, once a worker has processed it (the outbox keeps it with no SMTP_URL). */
export async function waitForWelcome(base: string, email: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await call(
      base,
      'GET',
      `/admin/emails?to=${encodeURIComponent(email)}`,
      { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      undefined,
      10_000,
    ).catch(() => undefined);
    const emails = (answer?.body['emails'] ?? []) as Array<{ text: string | null; status: string }>;
    const text = emails.find((e) => e.status !== 'queued' && e.text?.includes('Temporary password'))?.text;
    if (text !== undefined && text !== null) return text;
    assert.ok(Date.now() < deadline, `no welcome email for ${email} (a worker must send it)`);
    await sleep(200);
  }
}

const line = (text: string, label: string) => new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(text)?.[1];

/** A policyholder with a policy and an access token, through the API (a worker must run somewhere). */
export async function policyholder(
  base: string,
  company: CompanyHeaders,
  email: string,
): Promise<{ reference: string; accessToken: string; input: ReturnType<typeof livePolicyInput> }> {
  const input = livePolicyInput({ proposer: { email } });
  const created = await call(base, 'POST', '/policys', company, input);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const text = await waitForWelcome(base, email);
  const username = line(text, 'Username')!;
  const temporary = line(text, 'Temporary password')!;
  const first = await call(base, 'POST', '/auth/token', company, {
    type: 'USER_PASSWORD_AUTH',
    username,
    password: temporary,
  });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const password = 'Tangerine-Kettle-Faults-Orbit';
  const second = await call(base, 'POST', '/auth/token', company, {
    type: 'NEW_PASSWORD_REQUIRED',
    username,
    session: first.body['session'],
    new_password: password,
  });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  const done = await call(base, 'POST', '/auth/token', company, {
    type: 'USER_PASSWORD_AUTH',
    username,
    password,
  });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return {
    reference: created.body['policy_reference'] as string,
    accessToken: done.body['access_token'] as string,
    input,
  };
}

export type ProxyMode = 'pass' | 'refuse' | 'blackhole' | 'mute';

/**
 * A TCP hop between the service and PostgreSQL that can fail as networks do: `refuse` drops every
 * connection and refuses new ones (a database restart, a PgBouncer restart); `blackhole` keeps the
 * sockets open but carries nothing, either way (a failover, a partition); `mute` carries requests but
 * loses every answer (a request that arrived, whose caller never hears back). Connections that went dark
 * stay dark after `pass` is restored, as the old paths to a failed-over primary do.
 */
export async function startFaultProxy(target: { host: string; port: number }) {
  let mode: ProxyMode = 'pass';
  interface Pair {
    readonly client: net.Socket;
    readonly upstream: net.Socket | undefined;
    dark: boolean;
  }
  const pairs = new Set<Pair>();
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    if (mode === 'blackhole') {
      const pair: Pair = { client, upstream: undefined, dark: true };
      pairs.add(pair);
      client.on('close', () => pairs.delete(pair));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on('error', () => undefined);
    const pair: Pair = { client, upstream, dark: false };
    pairs.add(pair);
    client.on('data', (data) => {
      if (!pair.dark) upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (!pair.dark && mode !== 'mute') client.write(data);
    });
    const closeBoth = () => {
      pairs.delete(pair);
      if (!pair.dark) {
        client.destroy();
        upstream.destroy();
      }
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    set(next: ProxyMode): void {
      mode = next;
      if (next === 'refuse')
        for (const pair of pairs) {
          pair.dark = false;
          pair.client.destroy();
          pair.upstream?.destroy();
        }
      if (next === 'blackhole')
        for (const pair of pairs) {
          // The server's end goes with the failed primary; the service's end hears nothing.
          pair.dark = true;
          pair.upstream?.destroy();
        }
    },
    async close(): Promise<void> {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * A billing worker (`ROLE=worker`) on `databaseUrl`, charging through the sandbox at `sandboxBase`,
 * resolved once it has started. Its own daily run is set far in the day, so that the test drives the
 * billing days. `env` adds to or overrides its settings.
 */
export async function startBillingWorker(
  databaseUrl: string,
  sandboxBase: string,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...BASE_ENV,
      ROLE: 'worker',
      // Each worker serves its metrics on a port of its own (several run at once).
      PORT: String(await freePort()),
      DATABASE_URL: databaseUrl,
      SANDBOX_STRIPE_API_BASE: `${sandboxBase}/sandbox/stripe`,
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'info',
      BILLING_RUN_AT: '23:59',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the worker exited with ${String(code)} before it started`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      if (buffer.includes('milepost started')) resolve();
    });
  });
  child.stdout.resume();
  return child;
}
