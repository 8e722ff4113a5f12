import type { PGlite } from '@electric-sql/pglite';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { resilientConnectionSettings } from './database.ts';

export interface ChangeHandlers {
  /** A notification's payload. */
  onChange(payload: string): void;
  /** Notifications may have been missed (the connection was lost, or is back): forget what they guard. */
  onReset(): void;
}

/**
 * PostgreSQL's LISTEN/NOTIFY, for caches that must drop an entry when another process changes its
 * rows. `live` is false while no connection is listening; a cache must not answer from memory then.
 */
export interface ChangeFeed {
  readonly live: boolean;
  /**
   * Resolves once every notification committed before the call has reached the subscribers (true), or
   * false when the feed is not live: a read from memory that must see a write just answered by another
   * process waits for this first. Concurrent callers share one round trip on the LISTEN connection.
   */
  caughtUp(): Promise<boolean>;
  subscribe(channel: string, handlers: ChangeHandlers): void;
  close(): Promise<void>;
}

/** The `application_name` of the LISTEN connection, as pg_stat_activity shows it. */
export const CHANGE_FEED_APPLICATION_NAME = 'milepost-change-feed';
const CHANNEL = /^[a-z_][a-z0-9_]*$/;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 10_000;
/**
 * A connection that went silent (a failover, a partition) raises no error: the feed asks the server a
 * question this often, and one left unanswered for HEARTBEAT_TIMEOUT_MS counts as a lost connection.
 * Until then the feed may look live while notifications go nowhere; this bounds that time.
 */
const HEARTBEAT_INTERVAL_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;

export function createChangeFeed(
  database: { pglite: PGlite | undefined; connectionString: string | undefined },
  logger: FastifyBaseLogger,
): ChangeFeed {
  if (database.pglite !== undefined) return pgliteFeed(database.pglite, logger);
  if (database.connectionString !== undefined) return postgresFeed(database.connectionString, logger);
  throw new Error('a change feed needs PGlite or a PostgreSQL URL');
}

function checked(channel: string): string {
  if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
  return channel;
}

function pgliteFeed(pglite: PGlite, logger: FastifyBaseLogger): ChangeFeed {
  let listening = 0;
  let subscribed = 0;
  const stops: Array<() => Promise<void>> = [];
  return {
    get live() {
      return subscribed > 0 && listening === subscribed;
    },
    // In this process: a notification reaches its subscribers as the statement that committed it ends.
    caughtUp() {
      return Promise.resolve(subscribed > 0 && listening === subscribed);
    },
    subscribe(channel, handlers) {
      subscribed++;
      pglite
        .listen(checked(channel), (payload) => {
          handlers.onChange(payload);
        })
        .then((stop) => {
          listening++;
          stops.push(stop);
        })
        .catch((error: unknown) => {
          logger.error({ err: error, channel }, 'change feed: LISTEN failed');
        });
    },
    async close() {
      listening = 0;
      if (!pglite.closed) for (const stop of stops.splice(0)) await stop().catch(() => undefined);
    },
  };
}

/** One connection that LISTENs on every channel; reconnects with backoff, resetting subscribers each time. */
function postgresFeed(connectionString: string, logger: FastifyBaseLogger): ChangeFeed {
  const channels = new Map<string, ChangeHandlers[]>();
  let client: pg.Client | undefined;
  let connecting = false;
  let restart = false;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  // Read through a function: `closed` changes while connect() awaits, which narrowing cannot see.
  const isClosed = () => closed;

  const resetAll = () => {
    for (const handlers of channels.values()) for (const h of handlers) h.onReset();
  };

  function lost(from: pg.Client): void {
    if (client !== from) return;
    client = undefined;
    stopHeartbeat();
    resetAll();
    from.end().catch(() => undefined);
    retry();
  }

  function stopHeartbeat(): void {
    if (heartbeat !== undefined) clearInterval(heartbeat);
    heartbeat = undefined;
  }

  function startHeartbeat(target: pg.Client): void {
    stopHeartbeat();
    heartbeat = setInterval(() => {
      target
        .query({ text: 'select 1', query_timeout: HEARTBEAT_TIMEOUT_MS } as pg.QueryConfig)
        .catch((error: unknown) => {
          logger.warn({ err: error }, 'change feed: the connection does not answer');
          lost(target);
        });
    }, HEARTBEAT_INTERVAL_MS);
    heartbeat.unref();
  }

  function retry(): void {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  }

  async function connect(): Promise<void> {
    if (closed || connecting || client !== undefined) return;
    connecting = true;
    // Named, so operators (and tests) can tell it apart in pg_stat_activity.
    const next = new pg.Client({
      ...resilientConnectionSettings(connectionString),
      application_name: CHANGE_FEED_APPLICATION_NAME,
    });
    next.on('notification', (message) => {
      for (const h of channels.get(message.channel) ?? []) h.onChange(message.payload ?? '');
    });
    next.on('error', (error) => {
      logger.warn({ err: error }, 'change feed: connection lost');
      lost(next);
    });
    next.on('end', () => {
      lost(next);
    });
    try {
      await next.connect();
      for (const channel of channels.keys()) await next.query(`listen ${channel}`);
      if (isClosed()) {
        await next.end();
        return;
      }
      client = next;
      retryMs = RETRY_MIN_MS;
      startHeartbeat(next);
      if (restart) {
        restart = false;
        lost(next);
        return;
      }
      // Whatever changed while nobody listened is unknown: subscribers start again from nothing.
      resetAll();
    } catch (error) {
      logger.warn({ err: error }, 'change feed: cannot listen; reads go to the database meanwhile');
      next.end().catch(() => undefined);
      retry();
    } finally {
      connecting = false;
    }
  }

  return {
    get live() {
      return client !== undefined;
    },
    caughtUp: sharedRoundTrips(() => client),
    subscribe(channel, handlers) {
      const list = channels.get(checked(channel));
      if (list !== undefined) {
        list.push(handlers);
        return;
      }
      channels.set(channel, [handlers]);
      // A channel added to a listening connection: start that connection again with every channel.
      if (client !== undefined) lost(client);
      else if (connecting) restart = true;
      else void connect();
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      stopHeartbeat();
      const current = client;
      client = undefined;
      if (current !== undefined) await current.end().catch(() => undefined);
    },
  };
}

/**
 * `caughtUp` of the PostgreSQL feed: a round trip on the LISTEN connection `current()` returns. PostgreSQL
 * sends a listening session the notifications committed before a query arrives ahead of that query's
 * answer, and pg hands them to the subscribers as they come: once it answers, every write committed
 * before it was sent has been seen. One round trip is in flight at a time; callers that arrive meanwhile
 * wait for the next one, which starts after them.
 */
function sharedRoundTrips(current: () => pg.Client | undefined): () => Promise<boolean> {
  async function roundTrip(): Promise<boolean> {
    const target = current();
    if (target === undefined) return false;
    try {
      await target.query({ text: 'select 1', query_timeout: HEARTBEAT_TIMEOUT_MS } as pg.QueryConfig);
      return current() === target;
    } catch {
      return false;
    }
  }
  let inFlight: Promise<boolean> | undefined;
  let queued: Promise<boolean> | undefined;
  const start = (): Promise<boolean> => {
    const trip = roundTrip().finally(() => {
      if (inFlight === trip) inFlight = undefined;
    });
    inFlight = trip;
    return trip;
  };
  return () => {
    if (inFlight === undefined) return start();
    queued ??= inFlight.then(() => {
      queued = undefined;
      return start();
    });
    return queued;
  };
}
