import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { IPublishPacket, MqttClient } from 'mqtt';
import { Counter, Gauge, type Registry } from 'prom-client';
import { isDatabaseUnavailable } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import type { CrashEventInput, CrashEventResult } from './crash-schemas.ts';
import {
  crashValidator,
  EVENTS_TOPIC_FILTER,
  settleEvent,
  type EventSettlement,
} from './telematics-mqtt-events.ts';
import {
  batchValidator,
  MAX_PAYLOAD_BYTES,
  POSITIONS_TOPIC_FILTER,
  settlePositions,
  type PositionsSettlement,
} from './telematics-mqtt-positions.ts';
import type { PositionBatch, PositionBatchResult } from './telematics-schemas.ts';

/**
 * Unacknowledged messages the broker may send one connection at once (MQTT 5 Receive Maximum): the next
 * ones wait at the broker rather than in this process.
 */
const RECEIVE_MAXIMUM = 16;
/**
 * How long the broker keeps this consumer's session (its subscription and unacknowledged messages)
 * while it is disconnected. NOTE: MQTT 5 ends a session on disconnect unless this is set; a week covers
 * any restart or redeploy.
 */
const SESSION_EXPIRY_SECONDS = 7 * 86_400;
/**
 * The largest packet the broker may send us: larger payloads than MAX_PAYLOAD_BYTES still arrive (to be
 * counted as bad), and only beyond this does the broker drop them unseen.
 */
const MAX_PACKET_BYTES = 2 * MAX_PAYLOAD_BYTES;
/**
 * Connections of the events lane (`{clientId}.events.{i}`). NOTE: crashes are few and small (a
 * dozen fields, milliseconds to store); two keep one crash being retried from holding up the next.
 */
export const EVENT_CONNECTIONS = 2;
const RETRY_FIRST_DELAY_MS = 250;
const RETRY_MAX_DELAY_MS = 30_000;
/** Attempts at a message whose failure is neither a bad message nor a known transient one (a bug). */
const UNEXPECTED_FAILURE_ATTEMPTS = 5;
/** How long `start()` waits for the first subscriptions before leaving the clients to go on trying. */
const FIRST_SUBSCRIPTION_WAIT_MS = 5_000;
/** At most one log line per this long about the broker being unreachable (it retries every second). */
const CONNECTION_ERROR_LOG_INTERVAL_MS = 60_000;
/** MQTT 5 reason code of a DISCONNECT sent because another connection took the client id. */
const SESSION_TAKEN_OVER = 142;

/** What became of a message: each acknowledged, but the broker redelivers none of these. */
export type MqttMessageOutcome =
  | 'stored'
  | 'duplicate'
  | 'rejected'
  | 'bad_topic'
  | 'bad_payload'
  | 'unknown_client'
  | 'unknown_device'
  | 'failed';

type Settled =
  | PositionsSettlement
  | EventSettlement
  | { readonly outcome: 'bad_topic' | 'failed'; readonly reason: string };

/** A transient failure: the message is tried again and acknowledged only once it is stored. */
const TRANSIENT_APP_CODES = new Set(['SERVICE_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'RATE_LIMITED']);
// Serialisation failure, deadlock, lock not available, statement timeout, and class 53 (out of resources).
const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03', '57014']);

function isTransient(error: unknown): boolean {
  if (error instanceof AppError) return TRANSIENT_APP_CODES.has(error.code);
  if (isDatabaseUnavailable(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (TRANSIENT_SQLSTATES.has(code) || code.startsWith('53'));
}

type TopicParts =
  | { ok: true; clientId: string; environment: DataEnvironment; deviceId: string; kind: string }
  | { ok: false; reason: string };

/** The parts of a topic the subscription matched (six levels; a `+` level may still be empty). */
function parseTopic(topic: string): TopicParts {
  const [, clientId = '', environment = '', , deviceId = '', kind = ''] = topic.split('/');
  if (clientId === '') return { ok: false, reason: 'the client_id level is empty' };
  if (environment !== 'sandbox' && environment !== 'production')
    return { ok: false, reason: 'the environment level must be sandbox or production' };
  return { ok: true, clientId, environment, deviceId, kind };
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A URL safe to log: no user name or password. */
function redactedUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

export interface MqttPositionConsumerDeps {
  readonly url: string;
  /**
   * Positions connection `i` uses the client id `{clientId}.{i}`, events connection `i`
   * `{clientId}.events.{i}`: stable, so a restart resumes their sessions.
   */
  readonly clientId: string;
  /** Positions connections, each storing one message at a time, all in the share group. */
  readonly connections: number;
  readonly shareGroup: string;
  readonly ingest: (tenant: Tenant, batch: PositionBatch) => Promise<PositionBatchResult>;
  /**
   * Stores a device's crash (the events topic, on connections of its own); `body` names the payload in
   * a refusal. Without it only positions are consumed.
   */
  readonly recordCrash?: (tenant: Tenant, input: CrashEventInput, body: string) => Promise<CrashEventResult>;
  /** A company's tenant by its public client id (cached briefly); AppError INVALID_CLIENT_CREDENTIALS if unknown. */
  readonly resolveTenant: (clientId: string, environment: DataEnvironment) => Promise<Tenant>;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Registry;
}

/**
 * A lane: connections (and broker sessions) of its own, subscribed to one kind of message. NOTE: the
 * broker queues a session's messages in order, and each connection stores one at a time, so a crash
 * sharing a session with position batches waited behind up to a thousand of them (Mosquitto's
 * max_queued_messages), or was dropped with them once that queue was full.
 */
interface Lane {
  readonly name: 'positions' | 'events';
  readonly connections: number;
  readonly clientIdOf: (index: number) => string;
  /** Shared subscriptions taken on every (re)connect. */
  readonly subscribe: readonly string[];
  /**
   * Shared subscriptions this lane's sessions may hold from an earlier version (positions and events
   * were once taken on the same connections): dropped on every connect.
   */
  readonly unsubscribe: readonly string[];
}

/** The consumer's counters and gauges, on the process's registry (/metrics). */
function consumerMetrics(registry: Registry) {
  const registers = [registry];
  return {
    messages: new Counter({
      name: 'milepost_mqtt_messages_total',
      help: 'Position and event (crash) messages received over MQTT, by outcome (stored, duplicate, rejected, bad_topic, bad_payload, unknown_client, unknown_device, failed)',
      labelNames: ['outcome'],
      registers,
    }),
    positions: new Counter({
      name: 'milepost_mqtt_positions_total',
      help: 'Positions in MQTT messages that reached storage, by outcome (accepted, duplicate, rejected)',
      labelNames: ['outcome'],
      registers,
    }),
    retries: new Counter({
      name: 'milepost_mqtt_retries_total',
      help: 'Attempts at storing a message repeated after a transient failure (the database unavailable)',
      registers,
    }),
    inFlight: new Gauge({
      name: 'milepost_mqtt_messages_in_flight',
      help: 'Messages received and not yet acknowledged or given up, by lane (positions, events)',
      labelNames: ['lane'],
      registers,
    }),
    connected: new Gauge({
      name: 'milepost_mqtt_connected',
      help: 'Connections to the MQTT broker that are connected and subscribed, by lane (positions, events)',
      labelNames: ['lane'],
      registers,
    }),
  };
}

/** What the consumer's connections share. */
interface Consumer {
  readonly deps: MqttPositionConsumerDeps;
  readonly validate: ReturnType<typeof batchValidator>;
  readonly validateCrash: ReturnType<typeof crashValidator>;
  readonly metrics: ReturnType<typeof consumerMetrics>;
  readonly lanes: readonly Lane[];
  readonly stopping: AbortController;
  readonly working: Set<Promise<void>>;
  readonly clients: Array<{ readonly lane: Lane; readonly client: MqttClient }>;
  readonly inFlight: Map<Lane['name'], number>;
  lastConnectionError: { message: string; atMs: number };
}

/**
 * What a message is: its topic and payload checked as the HTTP route checks a body, then stored. By its
 * topic, whichever lane it came on: a session kept from before the lanes may still hold either kind.
 */
async function settle(consumer: Consumer, topic: string, payload: Buffer): Promise<Settled> {
  const { deps } = consumer;
  const parts = parseTopic(topic);
  if (!parts.ok) return { outcome: 'bad_topic', reason: parts.reason };
  if (parts.kind === 'events') {
    const { recordCrash } = deps;
    if (recordCrash === undefined) return { outcome: 'bad_topic', reason: 'events are not consumed here' };
    return settleEvent(
      { recordCrash, resolveTenant: deps.resolveTenant },
      consumer.validateCrash,
      parts,
      payload,
    );
  }
  return settlePositions(deps, consumer.validate, parts, payload);
}

/** Counts what became of a message and logs it. */
function record(consumer: Consumer, topic: string, bytes: number, settled: Settled): void {
  const { metrics } = consumer;
  const { logger } = consumer.deps;
  metrics.messages.inc({ outcome: settled.outcome });
  if ('crash' in settled) {
    const { crash } = settled;
    logger.info({ topic, outcome: settled.outcome, crash: crash.crash_reference }, 'mqtt crash event stored');
  } else if ('result' in settled) {
    const { result } = settled;
    metrics.positions.inc({ outcome: 'accepted' }, result.accepted);
    metrics.positions.inc({ outcome: 'duplicate' }, result.duplicates);
    metrics.positions.inc({ outcome: 'rejected' }, result.rejected.length);
    logger.debug(
      {
        topic,
        outcome: settled.outcome,
        accepted: result.accepted,
        duplicates: result.duplicates,
        rejected: result.rejected.length,
      },
      'mqtt positions stored',
    );
  } else if (settled.outcome === 'failed') {
    logger.error({ topic, bytes, reason: settled.reason }, 'mqtt positions message given up');
  } else {
    logger.warn(
      { topic, bytes, outcome: settled.outcome, reason: settled.reason },
      'bad mqtt positions message',
    );
  }
}

/** Stores a message, trying again after transient failures while `current()` holds; what became of it. */
async function consume(
  consumer: Consumer,
  packet: IPublishPacket,
  current: () => boolean,
): Promise<Settled | undefined> {
  const { logger } = consumer.deps;
  const topic = packet.topic;
  const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
  for (let attempt = 1; ; attempt++) {
    try {
      const settled = await settle(consumer, topic, payload);
      record(consumer, topic, payload.length, settled);
      return settled;
    } catch (error) {
      const transient = isTransient(error);
      if (!transient && attempt >= UNEXPECTED_FAILURE_ATTEMPTS) {
        const failed: Settled = { outcome: 'failed', reason: messageOf(error) };
        record(consumer, topic, payload.length, failed);
        return failed;
      }
      // Not acknowledged: retried here while this connection lasts, else redelivered by the broker.
      if (!current()) return undefined;
      consumer.metrics.retries.inc();
      const delayMs = Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** (attempt - 1));
      logger.warn(
        { err: error, topic, attempt, retryInMs: delayMs, transient },
        'mqtt positions message not stored; trying again',
      );
      try {
        await sleep(delayMs * (0.75 + Math.random() / 2), undefined, { signal: consumer.stopping.signal });
      } catch {
        return undefined; // stopping: the broker sends it to the next process
      }
      if (!current()) return undefined;
    }
  }
}

const notAcknowledged = new Error('not stored on this connection: the broker sends it again');

/** Moves a lane's count of messages in flight by `by`, and its gauge with it. */
function countInFlight(consumer: Consumer, lane: Lane, by: number): void {
  const count = (consumer.inFlight.get(lane.name) ?? 0) + by;
  consumer.inFlight.set(lane.name, count);
  consumer.metrics.inFlight.set({ lane: lane.name }, count);
}

/**
 * MQTT.js's documented per-message hook (`handleMessage`): it sends the PUBACK of a QoS 1 message when
 * the callback is called without an error, and reads the connection's next packet only then. So a
 * message is acknowledged exactly when what it carries is committed (or known never to be storable),
 * and each connection stores one message at a time: a lane's parallelism is its connections.
 * NOTE: a message whose connection dropped while it was stored is not acknowledged (the error): the
 * broker sends it again on the new connection, where its packet id may by then name another message.
 */
function handlerOf(consumer: Consumer, lane: Lane, client: MqttClient, generation: () => number) {
  const { stopping } = consumer;
  return (packet: IPublishPacket, callback: (error?: Error) => void): void => {
    // While stopping, a message is left unacknowledged: the broker keeps it for this client id.
    if (stopping.signal.aborted) return;
    const at = generation();
    const current = () => !stopping.signal.aborted && client.connected && generation() === at;
    countInFlight(consumer, lane, 1);
    const work = consume(consumer, packet, current)
      .then((settled) => {
        if (settled !== undefined && current()) callback();
        else callback(notAcknowledged);
      })
      .catch((error: unknown) => {
        consumer.deps.logger.error(
          { err: error, topic: packet.topic },
          'mqtt positions consumer failed on a message',
        );
        callback(notAcknowledged);
      })
      .finally(() => {
        countInFlight(consumer, lane, -1);
        consumer.working.delete(work);
      });
    consumer.working.add(work);
  };
}

function logConnectionError(consumer: Consumer, error: Error): void {
  const nowMs = Date.now();
  const last = consumer.lastConnectionError;
  if (error.message === last.message && nowMs - last.atMs < CONNECTION_ERROR_LOG_INTERVAL_MS) return;
  consumer.lastConnectionError = { message: error.message, atMs: nowMs };
  consumer.deps.logger.warn(
    { err: error, url: redactedUrl(consumer.deps.url) },
    'mqtt broker connection error; retrying',
  );
}

/** Sets a lane's gauge of connections subscribed, from its clients' state. */
function countConnected(consumer: Consumer, lane: Lane): void {
  const connected = consumer.clients.filter((c) => c.lane === lane && c.client.connected).length;
  consumer.metrics.connected.set({ lane: lane.name }, connected);
}

/** The connection's log lines and gauge as it connects, drops, is taken over or fails to connect. */
function watchConnection(
  consumer: Consumer,
  lane: Lane,
  client: MqttClient,
  clientId: string,
  connections: () => number,
) {
  const { deps, stopping } = consumer;
  client.on('close', () => {
    if (connections() > 0) countConnected(consumer, lane);
  });
  client.on('offline', () => {
    if (!stopping.signal.aborted && connections() > 0)
      deps.logger.warn({ url: redactedUrl(deps.url), clientId }, 'mqtt broker connection lost; reconnecting');
  });
  client.on('disconnect', (packet) => {
    const taken = packet.reasonCode === SESSION_TAKEN_OVER;
    deps.logger[taken ? 'error' : 'warn'](
      { reasonCode: packet.reasonCode, clientId },
      taken
        ? 'another connection took this MQTT client id: give each consuming process its own MQTT_CLIENT_ID'
        : 'the mqtt broker disconnected this consumer',
    );
  });
  client.on('error', (error) => {
    logConnectionError(consumer, error);
  });
}

/** Subscribes a lane's connection (on each connect), and drops what its session held from before. */
function subscribeLane(consumer: Consumer, lane: Lane, client: MqttClient, onSubscribed: () => void): void {
  const { deps } = consumer;
  const subscription = [...lane.subscribe];
  // Subscribing again on a resumed session changes nothing, and picks up a changed share group.
  client.subscribe(subscription, { qos: 1 }, (error, granted) => {
    const refused = granted?.find((g) => g.qos > 1);
    if (error !== null || refused !== undefined) {
      deps.logger.error(
        { err: error ?? undefined, subscription, reasonCode: refused?.qos },
        `mqtt subscription refused: ${lane.name} are not consumed`,
      );
      return;
    }
    onSubscribed();
  });
  if (lane.unsubscribe.length > 0)
    client.unsubscribe([...lane.unsubscribe], (error) => {
      // The session keeps the old subscription: those messages still come here, and are still stored.
      if (error instanceof Error)
        deps.logger.warn({ err: error, subscription: lane.unsubscribe }, 'mqtt unsubscribe failed');
    });
}

/** One connection of a lane: subscribed on every (re)connect; resolves once first subscribed. */
async function open(consumer: Consumer, lane: Lane, index: number): Promise<void> {
  const { deps } = consumer;
  const clientId = lane.clientIdOf(index);
  // Loaded here, where a worker consumes, not by every process that imports the module (API ones).
  const { connect } = await import('mqtt');
  const client = connect(deps.url, {
    clientId,
    protocolVersion: 5,
    clean: false,
    keepalive: 30,
    reconnectPeriod: 1000,
    connectTimeout: 10_000,
    resubscribe: false,
    properties: {
      sessionExpiryInterval: SESSION_EXPIRY_SECONDS,
      receiveMaximum: RECEIVE_MAXIMUM,
      maximumPacketSize: MAX_PACKET_BYTES,
    },
  });
  consumer.clients.push({ lane, client });
  let connections = 0;
  client.handleMessage = handlerOf(consumer, lane, client, () => connections);
  return new Promise<void>((subscribed) => {
    client.on('connect', (connack) => {
      connections++;
      consumer.lastConnectionError = { message: '', atMs: 0 };
      subscribeLane(consumer, lane, client, () => {
        countConnected(consumer, lane);
        deps.logger.info(
          {
            url: redactedUrl(deps.url),
            clientId,
            subscription: lane.subscribe,
            sessionPresent: connack.sessionPresent,
          },
          lane.name === 'events' ? 'consuming crash events over mqtt' : 'consuming positions over mqtt',
        );
        subscribed();
      });
    });
    watchConnection(consumer, lane, client, clientId, () => connections);
  });
}

/** The lanes: positions on `connections` connections; events (with `recordCrash`) on connections of their own. */
function lanesOf(deps: MqttPositionConsumerDeps): Lane[] {
  const shared = (filter: string) => `$share/${deps.shareGroup}/${filter}`;
  const positions: Lane = {
    name: 'positions',
    connections: deps.connections,
    clientIdOf: (index) => `${deps.clientId}.${String(index)}`,
    subscribe: [shared(POSITIONS_TOPIC_FILTER)],
    unsubscribe: [shared(EVENTS_TOPIC_FILTER)],
  };
  if (deps.recordCrash === undefined) return [positions];
  const events: Lane = {
    name: 'events',
    connections: EVENT_CONNECTIONS,
    clientIdOf: (index) => `${deps.clientId}.events.${String(index)}`,
    subscribe: [shared(EVENTS_TOPIC_FILTER)],
    unsubscribe: [],
  };
  return [positions, events];
}

/**
 * Positions and crash events over MQTT, an inbound adapter beside the HTTP routes: subscribes (QoS 1,
 * shared subscriptions, persistent sessions) to every device's positions topic on one set of
 * connections and to its events topic on another, so a crash never queues behind position batches,
 * and acknowledges a message only once what it carries is committed (or it is known never to be
 * storable), so a consumer killed at any point loses nothing: the broker sends what was unacknowledged
 * again, and storing it again is harmless.
 */
export function createMqttPositionConsumer(deps: MqttPositionConsumerDeps) {
  const { logger } = deps;
  const consumer: Consumer = {
    deps,
    validate: batchValidator(),
    validateCrash: crashValidator(),
    metrics: consumerMetrics(deps.metrics),
    lanes: lanesOf(deps),
    stopping: new AbortController(),
    working: new Set<Promise<void>>(),
    clients: [],
    inFlight: new Map(),
    lastConnectionError: { message: '', atMs: 0 },
  };
  const { clients, stopping } = consumer;
  for (const lane of consumer.lanes) {
    consumer.metrics.connected.set({ lane: lane.name }, 0);
    consumer.metrics.inFlight.set({ lane: lane.name }, 0);
  }

  return {
    /**
     * Opens every lane's connections and subscribes; waits up to 5 s for the first subscriptions (the
     * clients go on trying to connect after that, and subscribe whenever they connect).
     */
    async start(): Promise<void> {
      if (clients.length > 0) return;
      const all = Promise.all(
        consumer.lanes.flatMap((lane) =>
          Array.from({ length: lane.connections }, (_, index) => open(consumer, lane, index)),
        ),
      );
      const timer = sleep(FIRST_SUBSCRIPTION_WAIT_MS, 'timeout' as const, { ref: false });
      if ((await Promise.race([all, timer])) === 'timeout')
        logger.warn(
          { url: redactedUrl(deps.url) },
          'mqtt broker not reached yet: positions are consumed once it is (the client keeps trying)',
        );
    },

    /**
     * Stops taking messages (those that arrive now stay with the broker for these client ids), lets the
     * ones in flight commit and be acknowledged for up to `timeoutMs`, and disconnects, keeping the sessions.
     */
    async stop(timeoutMs: number): Promise<void> {
      if (clients.length === 0 || stopping.signal.aborted) return;
      stopping.abort();
      const drained = Promise.allSettled([...consumer.working]).then(() => 'drained' as const);
      const late = sleep(timeoutMs, 'late' as const, { ref: false });
      const finished = await Promise.race([drained, late]);
      if (finished === 'late')
        logger.warn(
          { inFlight: Object.fromEntries(consumer.inFlight) },
          'mqtt messages still in flight at shutdown: the broker will send them again',
        );
      await Promise.all(clients.map((c) => c.client.endAsync(finished === 'late')));
      for (const lane of consumer.lanes) consumer.metrics.connected.set({ lane: lane.name }, 0);
    },
  };
}

export type MqttPositionConsumer = ReturnType<typeof createMqttPositionConsumer>;
