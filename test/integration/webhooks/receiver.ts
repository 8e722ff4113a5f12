import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

export interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly receivedAt: number;
}

/** What the receiver answers for one request: a status, or a promise of one (to hold the request open). */
export type Responder = (request: Received, earlier: readonly Received[]) => number | Promise<number>;

/** A real HTTP webhook receiver on a random local port that keeps every request it gets. */
export async function startReceiver(respond: Responder = () => 200) {
  const received: Received[] = [];
  let responder = respond;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
      );
      const request: Received = {
        path: req.url ?? '/',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const earlier = received.filter((r) => r.path === request.path);
      received.push(request);
      void Promise.resolve(responder(request, earlier)).then((status) => {
        res
          .writeHead(status, { 'content-type': 'text/plain' })
          .end(status < 300 ? 'ok' : `failing on purpose`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    setResponder(next: Responder) {
      responder = next;
    },
    /** Requests to `path`, once there are at least `count` of them. */
    async waitFor(path: string, count = 1, timeoutMs = 10_000): Promise<Received[]> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const mine = received.filter((r) => r.path === path);
        if (mine.length >= count) return mine;
        if (Date.now() > until)
          throw new Error(`timed out waiting for ${count} request(s) to ${path}; have ${mine.length}`);
        await sleep(20);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** Verifies a request as a receiver would, with the independent `standardwebhooks` package; returns the body. */
export function verified(secret: string, request: Received): VerifiedBody {
  return new Webhook(secret).verify(request.body, request.headers) as VerifiedBody;
}

export interface VerifiedBody {
  id: string;
  type: string;
  created: number;
  environment: string;
  data: Record<string, unknown>;
}
