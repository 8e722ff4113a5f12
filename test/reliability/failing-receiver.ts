import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

/** What the receiver does with one request. */
export type Behaviour =
  | { kind: 'ok'; status: number; delayMs: number }
  | { kind: 'status'; status: number }
  /** Reads the request and never answers: the sender's own time limit ends the attempt. */
  | { kind: 'hang' }
  /** Processes the request but answers 2xx only after `afterMs`, once the sender has given up. */
  | { kind: 'late'; afterMs: number }
  /** Resets the connection (RST) as soon as the headers arrive, before reading the body. */
  | { kind: 'reset' }
  /** Reads the whole request, then closes the connection (FIN) without answering. */
  | { kind: 'close' };

export type BehaviourKind = Behaviour['kind'];

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  readonly endpoint: string;
  readonly eventId: string;
  /** 1 for the first request of this (endpoint, event), 2 for the second, … */
  readonly nth: number;
  readonly behaviour: Behaviour;
  readonly headers: Record<string, string>;
  /** Null when the connection was reset before the body was read. */
  readonly body: string | null;
  /** The verdict of `standardwebhooks` on arrival: 'valid' or its error (null: no body to verify then). */
  readonly verification: string | null;
  readonly receivedAtMs: number;
}

/**
 * A uniform number in [0, 1) fixed by its inputs: the receiver's decisions depend on the seed, the
 * endpoint, the event and the attempt, never on the order in which concurrent requests arrive.
 */
export function draw(...parts: ReadonlyArray<string | number>): number {
  return createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * A real HTTP receiver for several webhook endpoints (one path each), whose answer to each request
 * `decide` chooses. It verifies every complete request with `standardwebhooks` as it arrives, against
 * the secret of the endpoint its path names, as a real receiver would (the library also checks that the
 * timestamp is fresh).
 */
export async function startFailingReceiver(options: {
  secretOf: (endpoint: string) => string | undefined;
  decide: (endpoint: string, eventId: string, nth: number) => Behaviour;
}) {
  const received: ReceivedRequest[] = [];
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    const endpoint = (req.url ?? '/').slice(1);
    const headers = Object.fromEntries(
      Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
    );
    const eventId = headers['webhook-id'] ?? '';
    const key = `${endpoint} ${eventId}`;
    const nth = (seen.get(key) ?? 0) + 1;
    seen.set(key, nth);
    const behaviour = options.decide(endpoint, eventId, nth);
    const receivedAtMs = Date.now();

    if (behaviour.kind === 'reset') {
      received.push({
        endpoint,
        eventId,
        nth,
        behaviour,
        headers,
        body: null,
        verification: null,
        receivedAtMs,
      });
      req.socket.resetAndDestroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const secret = options.secretOf(endpoint);
      let verification: string;
      try {
        if (secret === undefined) throw new Error(`no endpoint at /${endpoint}`);
        new Webhook(secret).verify(body, headers);
        verification = 'valid';
      } catch (error) {
        verification = error instanceof Error ? error.message : String(error);
      }
      received.push({ endpoint, eventId, nth, behaviour, headers, body, verification, receivedAtMs });
      switch (behaviour.kind) {
        case 'ok':
          void sleep(behaviour.delayMs).then(() => res.writeHead(behaviour.status).end());
          return;
        case 'status':
          res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end('failing on purpose');
          return;
        case 'hang':
          return;
        case 'late': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (!res.destroyed) res.writeHead(200).end();
          }, behaviour.afterMs);
          timers.add(timer);
          return;
        }
        case 'close':
          req.socket.destroy();
          return;
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset socket reports ECONNRESET on the server side too; that is the point, not a failure.
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${String(port)}`,
    received,
    /** Connections open now: hung requests whose sender has not given up yet. */
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

export type FailingReceiver = Awaited<ReturnType<typeof startFailingReceiver>>;
