import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the proxy saw it, for choosing the one to hold, refuse or amend. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

export interface HeldRequest {
  /** Resolves when the chosen request reaches the proxy (it waits there until released). */
  readonly arrived: Promise<void>;
  release(): void;
}

export interface HeldProxy {
  /** Where clients send their requests (SANDBOX_STRIPE_API_BASE). */
  readonly url: string;
  /** Where requests go on to; set once the upstream listens. */
  target: string;
  /** Holds the next request that `matches` until released: a processor slow to answer that one call. */
  hold(matches: (request: SeenRequest) => boolean): HeldRequest;
  /** Answers the next request that `matches` as the processor answers a revoked key (401), unforwarded. */
  refuse(matches: (request: SeenRequest) => boolean): void;
  /** Passes the next request that `matches` on, and changes its JSON answer (a refund left pending). */
  amend(
    matches: (request: SeenRequest) => boolean,
    change: (answer: Record<string, unknown>) => object,
  ): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'host']);

/**
 * A real HTTP proxy in front of the payment sandbox, so that a test can act while one call to the
 * processor is in flight (a card added while the old one is being charged), or have the processor
 * refuse a call or answer it otherwise than the sandbox does.
 */
export async function startHeldProxy(): Promise<HeldProxy> {
  const holds: Array<{
    matches: (r: SeenRequest) => boolean;
    arrive: () => void;
    released: Promise<void> | 'refused';
  }> = [];
  const amends: Array<{
    matches: (r: SeenRequest) => boolean;
    change: (answer: Record<string, unknown>) => object;
  }> = [];
  const proxy: HeldProxy = {
    url: '',
    target: '',
    hold(matches) {
      let arrive = (): void => undefined;
      let release = (): void => undefined;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ matches, arrive, released });
      return { arrived, release };
    },
    amend(matches, change) {
      amends.push({ matches, change });
    },
    refuse(matches) {
      holds.push({ matches, arrive: () => undefined, released: 'refused' });
    },
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const seen = { method: request.method ?? 'GET', path: request.url ?? '/', body: body.toString() };
        const index = holds.findIndex((h) => h.matches(seen));
        if (index >= 0) {
          const [held] = holds.splice(index, 1);
          held!.arrive();
          if (held!.released === 'refused') {
            const error = { type: 'invalid_request_error', message: 'Invalid API Key provided' };
            response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
            return;
          }
          await held!.released;
        }
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => !HOP_BY_HOP.has(name)),
        ) as Record<string, string>;
        const upstream = await fetch(`${proxy.target}${seen.path}`, {
          method: seen.method,
          headers,
          ...(seen.method === 'GET' ? {} : { body }),
        });
        let answer = Buffer.from(await upstream.arrayBuffer());
        const amendIndex = amends.findIndex((a) => a.matches(seen));
        if (amendIndex >= 0) {
          const [amend] = amends.splice(amendIndex, 1);
          const parsed = JSON.parse(answer.toString()) as Record<string, unknown>;
          answer = Buffer.from(JSON.stringify(amend!.change(parsed)));
        }
        const answerHeaders = Object.fromEntries(
          [...upstream.headers].filter(([name]) => !HOP_BY_HOP.has(name) && name !== 'content-encoding'),
        );
        response.writeHead(upstream.status, answerHeaders).end(answer);
      })().catch((error: unknown) => {
        response.writeHead(502).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (proxy as { url: string }).url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return proxy;
}
