import { setTimeout as sleep } from 'node:timers/promises';
import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyBaseLogger } from 'fastify';
import type { IPublishPacket, MqttClient } from 'mqtt';
import { Counter, Gauge, type Registry } from 'prom-client';
import { isDatabaseUnavailable } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { DEFAULT_JSON_BODY_LIMITS, findJsonLimitBreach } from '../../platform/http/body-limits.ts';
import { findUnsafeInput } from '../../platform/http/input-safety.ts';
import { fieldErrors, parseJsonBody } from '../../platform/http/problem.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import { attributeFieldError } from './rules/position-attributes.ts';
import {
  POSITIONS_BODY_LIMIT_BYTES,
  POSITIONS_JSON_LIMITS,
  PositionBatchSchema,
  type PositionBatch,
  type PositionBatchResult,
} from './telematics-schemas.ts';

/**
 * The topics devices (or their gateways) publish positions to:
 * `milepost/{client_id}/{environment}/devices/{device_id}/positions`, the payload being the body of
 * POST /telematics/positions without `device_id`.
 */
export const POSITIONS_TOPIC_FILTER = 'milepost/+/+/devices/+/positions';

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
/** The largest payload taken, as POST /telematics/positions' body limit (10,000 positions with every field). */
const MAX_PAYLOAD_BYTES = POSITIONS_BODY_LIMIT_BYTES;
/**
 * What a payload may hold besides its bytes, as POST /telematics/positions' body: checked on the raw bytes
 * before anything is parsed, so 4 MiB of keys or of nesting costs a scan, not a parse.
 */
const PAYLOAD_JSON_LIMITS = { ...DEFAULT_JSON_BODY_LIMITS, ...POSITIONS_JSON_LIMITS };
/**
 * The largest packet the broker may send us: larger payloads than MAX_PAYLOAD_BYTES still arrive (to be
 * counted as bad), and only beyond this does the broker drop them unseen.
 */
const MAX_PACKET_BYTES = 2 * MAX_PAYLOAD_BYTES;
const RETRY_FIRST_DELAY_MS = 250;
const RETRY_MAX_DELAY_MS = 30_000;
/** Attempts at a message whose failure is neither a bad message nor a known transient one (a bug). */
const UNEXPECTED_FAILURE_ATTEMPTS = 5;
/** How long `start()` waits for the first subscription before leaving the client to go on trying. */
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

interface Settled {
  readonly outcome: MqttMessageOutcome;
  readonly reason?: string;
  readonly result?: PositionBatchResult;
}

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
  | { ok: true; clientId: string; environment: DataEnvironment; deviceId: string }
  | { ok: false; reason: string };

/** The parts of a topic the subscription matched (six levels; a `+` level may still be empty). */
function parseTopic(topic: string): TopicParts {
  const [, clientId = '', environment = '', , deviceId = ''] = topic.split('/');
  if (clientId === '') return { ok: false, reason: 'the client_id level is empty' };
  if (environment !== 'sandbox' && environment !== 'production')
    return { ok: false, reason: 'the environment level must be sandbox or production' };
  return { ok: true, clientId, environment, deviceId };
}

type BatchValidator = ReturnType<typeof batchValidator>;

/** The route's batch schema, compiled with the settings of request bodies (no coercion, every error). */
function batchValidator() {
  const build = AjvCompiler()(
    {},
    {
      customOptions: {
        removeAdditional: false,
        allErrors: true,
        useDefaults: true,
        coerceTypes: false,
        strictNumbers: true,
      },
    },
  ) as unknown as (route: { schema: unknown; method: string; url: string; httpPart: string }) => {
    (data: unknown): boolean;
    errors?: Parameters<typeof fieldErrors>[0] | null;
  };
  return build({
    schema: PositionBatchSchema,
    method: 'POST',
    url: '/telematics/positions',
    httpPart: 'body',
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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
  /** Connection `i` uses the client id `{clientId}.{i}`: stable, so a restart resumes its session. */
  readonly clientId: string;
  /** Connections, each storing one message at a time, all in the share group. */
  readonly connections: number;
  readonly shareGroup: string;
  readonly ingest: (tenant: Tenant, batch: PositionBatch) => Promise<PositionBatchResult>;
  /** A company's tenant by its public client id (cached briefly); AppError INVALID_CLIENT_CREDENTIALS if unknown. */
  readonly resolveTenant: (clientId: string, environment: DataEnvironment) => Promise<Tenant>;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Registry;
}

/** The consumer's counters and gauges, on the process's registry (/metrics). */
function consumerMetrics(registry: Registry) {
  const registers = [registry];
  return {
    messages: new Counter({
      name: 'milepost_mqtt_messages_total',
      help: 'Position messages received over MQTT, by outcome (stored, duplicate, rejected, bad_topic, bad_payload, unknown_client, unknown_device, failed)',
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
      help: 'Messages received and not yet acknowledged or given up',
      registers,
    }),
    connected: new Gauge({
      name: 'milepost_mqtt_connected',
      help: 'Connections to the MQTT broker that are connected and subscribed',
      registers,
    }),
  };
}

/** What the consumer's connections share. */
interface Consumer {
  readonly deps: MqttPositionConsumerDeps;
  readonly validate: BatchValidator;
  readonly metrics: ReturnType<typeof consumerMetrics>;
  readonly subscription: string;
  readonly stopping: AbortController;
  readonly working: Set<Promise<void>>;
  readonly clients: MqttClient[];
  inFlight: number;
  lastConnectionError: { message: string; atMs: number };
}

/** What a message is: its topic and payload checked as POST /telematics/positions checks a body, then stored. */
async function settle(
  deps: MqttPositionConsumerDeps,
  validate: BatchValidator,
  topic: string,
  payload: Buffer,
): Promise<Settled> {
  const parts = parseTopic(topic);
  if (!parts.ok) return { outcome: 'bad_topic', reason: parts.reason };
  if (payload.length > MAX_PAYLOAD_BYTES)
    return {
      outcome: 'bad_payload',
      reason: `the payload is ${String(payload.length)} bytes; at most ${String(MAX_PAYLOAD_BYTES)}`,
    };
  const breach = findJsonLimitBreach(payload, PAYLOAD_JSON_LIMITS, '/payload');
  if (breach !== undefined) return { outcome: 'bad_payload', reason: `${breach.path} ${breach.message}` };
  let body: unknown;
  try {
    body = parseJsonBody(payload.toString('utf8'));
  } catch (error) {
    return { outcome: 'bad_payload', reason: messageOf(error) };
  }
  if (!isRecord(body)) return { outcome: 'bad_payload', reason: 'the payload must be a JSON object' };
  // The HTTP body as it is may be sent, device_id included, as long as it names the topic's device.
  if (body['device_id'] !== undefined && body['device_id'] !== parts.deviceId)
    return { outcome: 'bad_payload', reason: '/payload/device_id must equal the device of the topic' };
  const batch: Record<string, unknown> = { ...body, device_id: parts.deviceId };
  const unsafe = findUnsafeInput(batch, '/payload');
  if (unsafe !== undefined) return { outcome: 'bad_payload', reason: `${unsafe.path} ${unsafe.message}` };
  if (!validate(batch)) {
    const errors = fieldErrors(validate.errors ?? [], 'payload');
    const topicError = errors.find((e) => e.path.startsWith('/payload/device_id'));
    if (topicError !== undefined)
      return { outcome: 'bad_topic', reason: `the device_id level ${topicError.message}` };
    return { outcome: 'bad_payload', reason: errors.map((e) => `${e.path} ${e.message}`).join('; ') };
  }
  // The service checks them too, but names the HTTP body: the reason here names the payload.
  const attributes = attributeFieldError((batch as PositionBatch).positions, '/payload');
  if (attributes !== undefined)
    return { outcome: 'bad_payload', reason: `${attributes.path} ${attributes.message}` };
  try {
    const tenant = await deps.resolveTenant(parts.clientId, parts.environment);
    const result = await deps.ingest(tenant, batch as PositionBatch);
    const outcome =
      result.accepted > 0 ? 'stored' : result.duplicates > 0 ? 'duplicate' : ('rejected' as const);
    return { outcome, result };
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    if (error.code === 'INVALID_CLIENT_CREDENTIALS')
      return { outcome: 'unknown_client', reason: 'no company has this client_id' };
    if (error.code === 'NOT_FOUND')
      return { outcome: 'unknown_device', reason: `no device ${parts.deviceId} in ${parts.environment}` };
    return { outcome: 'bad_payload', reason: error.message };
  }
}

/** Counts what became of a message and logs it. */
function record(consumer: Consumer, topic: string, bytes: number, settled: Settled): void {
  const { metrics } = consumer;
  const { logger } = consumer.deps;
  metrics.messages.inc({ outcome: settled.outcome });
  const { result } = settled;
  if (result !== undefined) {
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
      const settled = await settle(consumer.deps, consumer.validate, topic, payload);
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

/**
 * MQTT.js's documented per-message hook (`handleMessage`): it sends the PUBACK of a QoS 1 message when
 * the callback is called without an error, and reads the connection's next packet only then. So a
 * message is acknowledged exactly when its positions are committed (or known never to be storable),
 * and each connection stores one message at a time: the consumer's parallelism is its connections.
 * NOTE: a message whose connection dropped while it was stored is not acknowledged (the error): the
 * broker sends it again on the new connection, where its packet id may by then name another message.
 */
function handlerOf(consumer: Consumer, client: MqttClient, generation: () => number) {
  const { stopping, metrics } = consumer;
  return (packet: IPublishPacket, callback: (error?: Error) => void): void => {
    // While stopping, a message is left unacknowledged: the broker keeps it for this client id.
    if (stopping.signal.aborted) return;
    const at = generation();
    const current = () => !stopping.signal.aborted && client.connected && generation() === at;
    consumer.inFlight++;
    metrics.inFlight.set(consumer.inFlight);
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
        consumer.inFlight--;
        metrics.inFlight.set(consumer.inFlight);
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

/** The connection's log lines and gauge as it connects, drops, is taken over or fails to connect. */
function watchConnection(
  consumer: Consumer,
  client: MqttClient,
  clientId: string,
  connections: () => number,
) {
  const { deps, stopping } = consumer;
  client.on('close', () => {
    if (connections() > 0) consumer.metrics.connected.set(consumer.clients.filter((c) => c.connected).length);
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

/** One connection of the consumer: subscribed on every (re)connect; resolves once first subscribed. */
async function open(consumer: Consumer, lane: number): Promise<void> {
  const { deps, subscription } = consumer;
  const clientId = `${deps.clientId}.${String(lane)}`;
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
  consumer.clients.push(client);
  let connections = 0;
  client.handleMessage = handlerOf(consumer, client, () => connections);
  return new Promise<void>((subscribed) => {
    client.on('connect', (connack) => {
      connections++;
      consumer.lastConnectionError = { message: '', atMs: 0 };
      // Subscribing again on a resumed session changes nothing, and picks up a changed share group.
      client.subscribe(subscription, { qos: 1 }, (error, granted) => {
        const refused = granted?.find((g) => g.qos > 1);
        if (error !== null || refused !== undefined) {
          deps.logger.error(
            { err: error ?? undefined, subscription, reasonCode: refused?.qos },
            'mqtt subscription refused: positions are not consumed',
          );
          return;
        }
        consumer.metrics.connected.inc();
        deps.logger.info(
          { url: redactedUrl(deps.url), clientId, subscription, sessionPresent: connack.sessionPresent },
          'consuming positions over mqtt',
        );
        subscribed();
      });
    });
    watchConnection(consumer, client, clientId, () => connections);
  });
}

/**
 * Positions over MQTT, an inbound adapter beside the HTTP route: subscribes (QoS 1, shared
 * subscription, persistent session) to every device's positions topic and acknowledges a message only
 * once its positions are committed (or it is known never to be storable), so a consumer killed at any
 * point loses nothing: the broker sends what was unacknowledged again, and storing it again is harmless.
 */
export function createMqttPositionConsumer(deps: MqttPositionConsumerDeps) {
  const { logger } = deps;
  const consumer: Consumer = {
    deps,
    validate: batchValidator(),
    metrics: consumerMetrics(deps.metrics),
    subscription: `$share/${deps.shareGroup}/${POSITIONS_TOPIC_FILTER}`,
    stopping: new AbortController(),
    working: new Set<Promise<void>>(),
    clients: [],
    inFlight: 0,
    lastConnectionError: { message: '', atMs: 0 },
  };
  const { clients, stopping } = consumer;

  return {
    /**
     * Opens the connections and subscribes; waits up to 5 s for the first subscriptions (the clients go on
     * trying to connect after that, and subscribe whenever they connect).
     */
    async start(): Promise<void> {
      if (clients.length > 0) return;
      const all = Promise.all(Array.from({ length: deps.connections }, (_, lane) => open(consumer, lane)));
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
          { inFlight: consumer.inFlight },
          'mqtt messages still in flight at shutdown: the broker will send them again',
        );
      await Promise.all(clients.map((c) => c.endAsync(finished === 'late')));
      consumer.metrics.connected.set(0);
    },
  };
}

export type MqttPositionConsumer = ReturnType<typeof createMqttPositionConsumer>;
