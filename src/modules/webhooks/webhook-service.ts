import { randomBytes, randomUUID } from 'node:crypto';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { findCompanyContact, type Tenant } from '../companies/index.ts';
import { webhookEndpointDisabledEmail, type NotificationService } from '../notifications/index.ts';
import { SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE } from './event-catalogue.ts';
import { formatSecret, messageBody, SECRET_BYTES, signedHeaders, signingSecrets } from './rules/message.ts';
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt, shouldDisableEndpoint } from './rules/retry-schedule.ts';
import { normaliseSubscription, subscribes } from './rules/subscriptions.ts';
import { checkEndpointUrl, classifyAddress, urlPolicyFor } from './rules/url-safety.ts';
import { DEFAULT_EVENT_RETENTION_DAYS, maintainEventPartitions } from './event-partitions.ts';
import type { PartitionMaintenance } from '../../platform/db/monthly-partitions.ts';
import {
  cancelPendingDeliveries,
  claimDueDeliveries,
  deleteSettledDeliveries,
  claimPendingEvents,
  countEndpoints,
  deleteEndpoint,
  deletePendingEvents,
  endpointsWithDeliveryOf,
  findDelivery,
  findDeliveryOf,
  findEndpoint,
  findEvent,
  insertAttempt,
  insertDeliveries,
  insertEndpoint,
  listAttempts,
  listDeliveries,
  listEnabledEndpointsOf,
  listEndpoints,
  lockEndpoint,
  recordEndpointHealth,
  requeueDelivery,
  settleDelivery,
  updateEndpoint,
  type AttemptRecord,
  type ClaimedDelivery,
  type DeliveryRecord,
  type DeliveryStatus,
  type EndpointRecord,
} from './webhook-repository.ts';
import {
  checkResolvedHost,
  DELIVERY_TIMEOUT_MS,
  isUnknownName,
  sendWebhook,
  systemResolver,
  type AttemptOutcome,
  type Resolver,
} from './webhook-sender.ts';
import type {
  CreateWebhook,
  DeliveryView,
  UpdateWebhook,
  WebhookView,
  WebhookWithSecretView,
} from './webhook-schemas.ts';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';

/** Endpoints per company and environment: every event is sent once per endpoint. */
export const MAX_ENDPOINTS_PER_TENANT = 20;
/** After a rotation the old secret keeps signing, beside the new one, for this long. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3_600_000;
/** A claimed delivery is taken up again by any worker after this, if its attempt never reported back. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 45_000;
const FAN_OUT_BATCH = 200;
const DELIVERY_BATCH = 16;
/** Attempts in flight at once in one worker process, over every endpoint. */
const MAX_IN_FLIGHT = 64;
/** The delivery log keeps finished deliveries this long (the hourly housekeeping job deletes older ones). */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
/** Registration gives up on DNS after this; the address is checked again at every delivery anyway. */
const REGISTRATION_DNS_TIMEOUT_MS = 2_000;

const DEFAULT_ENDPOINT_CONCURRENCY = 4;
/** How long attempts cut short at shutdown may take to record themselves. */
const STOP_GRACE_MS = 2_000;

async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    work.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, ms, false);
    }),
  ]);
  clearTimeout(timer);
  return finished;
}

export interface WebhookLogger {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

const newEndpointReference = (): string => randomToken('we_', 12);
const newDeliveryReference = (): string => randomToken('wd_', 12);

const invalid = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', `${path.replace(/^\/body\//, '')} ${message}`, {
    errors: [{ path, message }],
  });

const iso = (at: Date | null): string | null => at?.toISOString() ?? null;

function endpointView(endpoint: EndpointRecord, now: Date): WebhookView {
  const rotating = signingSecrets(endpoint, now).length > 1;
  return {
    id: endpoint.reference,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.eventTypes,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    environment: endpoint.environment,
    previous_secret_expires_at: rotating ? iso(endpoint.previousSecretExpiresAt) : null,
    failing_since: iso(endpoint.failingSince),
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

function deliveryView(delivery: DeliveryRecord, attempts: readonly AttemptRecord[]): DeliveryView {
  return {
    id: delivery.reference,
    webhook_id: delivery.endpointReference,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    last_attempt_at: iso(delivery.lastAttemptAt),
    last_response_status_code: delivery.lastResponseStatus,
    last_error: delivery.lastError,
    delivered_at: iso(delivery.deliveredAt),
    created_at: delivery.createdAt.toISOString(),
    attempts: attempts.map((a) => ({
      attempt: a.attemptNumber,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status: a.outcome,
      response_status_code: a.responseStatus,
      response_body: a.responseBody,
      error: a.error,
    })),
  };
}

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([
    work,
    new Promise<'timeout'>((resolve) => {
      setTimeout(resolve, ms, 'timeout').unref();
    }),
  ]);

/**
 * Webhook endpoints, the fan-out of committed events to them, and signed delivery with retries.
 * Events reach the fan-out through a trigger-fed queue table (migration 0006), so the request that
 * caused an event only inserts one row; all network work happens in the worker, outside transactions.
 */
export function createWebhookService(deps: {
  db: Executor;
  clock: Clock;
  notifications: NotificationService;
  /** WEBHOOKS_ALLOW_PRIVATE: sandbox endpoints may be http and private. Production never. */
  allowPrivate: boolean;
  retryScheduleMs: readonly number[];
  pollIntervalMs: number;
  /** Attempts in flight at once to one endpoint, across workers (WEBHOOKS_ENDPOINT_CONCURRENCY). */
  endpointConcurrency?: number;
  /** Days events are kept before their month may be dropped (EVENT_RETENTION_DAYS). */
  eventRetentionDays?: number;
  resolve?: Resolver;
  logger?: WebhookLogger;
}) {
  const { db, clock, notifications } = deps;
  const resolve = deps.resolve ?? systemResolver;
  let poller: Poller | undefined;

  /** The URL as stored (normalised by the URL parser), or a 422 naming the rule it breaks. */
  async function acceptableUrl(tenant: Tenant, raw: string): Promise<string> {
    const policy = urlPolicyFor(tenant.environment, deps.allowPrivate);
    const check = checkEndpointUrl(raw, policy);
    if (!check.ok) throw invalid('/body/url', check.reason);
    const host = check.url.hostname.replace(/^\[|\]$/g, '');
    if (!policy.allowPrivate && classifyAddress(host) === undefined) {
      // Every delivery checks the addresses it connects to again; this catches mistakes early.
      const resolved = await withTimeout(
        checkResolvedHost(host, policy, resolve).catch((error: unknown) =>
          isUnknownName(error) ? ('unknown' as const) : ('unavailable' as const),
        ),
        REGISTRATION_DNS_TIMEOUT_MS,
      );
      // NOTE: a production endpoint whose name DNS does not know would only fail every delivery until it
      // was disabled: refused now. The sandbox keeps accepting a name whose DNS is not set up yet. A
      // resolver that does not answer (in time) says nothing about the URL: accepted in both.
      if (resolved === 'unknown' && tenant.environment === 'production')
        throw invalid('/body/url', `names a host that does not resolve (${host}: DNS has no address for it)`);
      if (typeof resolved === 'object' && !resolved.ok) throw invalid('/body/url', resolved.reason);
    }
    return check.url.href;
  }

  function subscription(events: readonly string[] | null | undefined): string[] | null {
    if (events === undefined || events === null) return null;
    const result = normaliseSubscription(events, SUBSCRIBABLE_EVENT_TYPES);
    if (!result.ok) {
      throw new AppError(
        'VALIDATION_FAILED',
        `Unknown event types: ${result.unknown.map((u) => u.type).join(', ')}`,
        {
          errors: result.unknown.map((u) => ({
            path: `/body/events/${u.index}`,
            message: 'is not an event type of the catalogue (GET /openapi.json, section webhooks)',
          })),
        },
      );
    }
    return result.eventTypes;
  }

  async function getEndpoint(trx: Executor, tenant: Tenant, reference: string, lock = false) {
    const endpoint = await findEndpoint(trx, tenant, reference, lock);
    if (endpoint === undefined) throw notFound('webhook endpoint');
    return endpoint;
  }

  async function viewDeliveries(
    trx: Executor,
    deliveries: readonly DeliveryRecord[],
  ): Promise<DeliveryView[]> {
    const attempts = await listAttempts(
      trx,
      deliveries.map((d) => d.id),
    );
    return deliveries.map((d) => deliveryView(d, attempts.get(d.id) ?? []));
  }

  async function viewDeliveryOf(trx: Executor, tenant: Tenant, eventId: string, endpointId: string) {
    const delivery = await findDeliveryOf(trx, tenant, eventId, endpointId);
    if (delivery === undefined) throw new AppError('INTERNAL', 'delivery vanished in its own transaction');
    const [view] = await viewDeliveries(trx, [delivery]);
    if (view === undefined) throw new AppError('INTERNAL', 'delivery vanished in its own transaction');
    return view;
  }

  const requireEnabled = (endpoint: EndpointRecord): void => {
    if (!endpoint.enabled)
      throw new AppError(
        'CONFLICT',
        'The webhook endpoint is disabled; enable it with PATCH /webhooks/{id} {"enabled": true} first',
      );
  };

  /** Switches off an endpoint that has failed every attempt for 3 days, and tells its company. */
  async function disableFailing(trx: Executor, endpoint: EndpointRecord, lastError: string, at: Date) {
    await updateEndpoint(trx, endpoint.id, { enabled: false, disabledReason: 'failing', at });
    await cancelPendingDeliveries(trx, endpoint.id, 'the endpoint was disabled after failing for 3 days', at);
    const company = await findCompanyContact(trx, endpoint.companyId);
    if (company === undefined || company.contactEmail === null) {
      deps.logger?.warn(
        { webhook: endpoint.reference, company: endpoint.companyId },
        'webhook endpoint disabled after failing for 3 days; the company has no contact_email to tell',
      );
      return;
    }
    await notifications.queueEmail(
      trx,
      { companyId: endpoint.companyId, environment: endpoint.environment },
      'webhook-endpoint-disabled',
      company.contactEmail,
      webhookEndpointDisabledEmail({
        companyName: company.name,
        endpointId: endpoint.reference,
        url: endpoint.url,
        environment: endpoint.environment,
        failingSince: (
          endpoint.failingSince ?? new Date(at.getTime() - DISABLE_AFTER_FAILING_MS)
        ).toISOString(),
        lastError,
      }),
    );
  }

  /** Writes the outcome of one attempt, schedules the next, and keeps the endpoint's failing streak. */
  async function settle(claim: ClaimedDelivery, startedAt: Date, outcome: AttemptOutcome): Promise<void> {
    const at = clock.now();
    await inTransaction(db, async (trx) => {
      // NOTE: the endpoint's row before the delivery's, whenever both are locked: the order retry and
      // replay lock them in. The other order deadlocks against a replay of this delivery (PostgreSQL
      // ends one with a 500). Most settles lock only the delivery: see recordEndpointHealth.
      let endpoint = await recordEndpointHealth(trx, claim.endpoint.id, outcome.delivered, startedAt);
      const disabling = (e: EndpointRecord | undefined): e is EndpointRecord =>
        e !== undefined && e.enabled && !outcome.delivered && shouldDisableEndpoint(e.failingSince, at);
      // Read without a lock: confirm under the row's lock, taken before the delivery's.
      if (disabling(endpoint)) endpoint = await lockEndpoint(trx, claim.endpoint.id);
      await insertAttempt(trx, claim.id, {
        attemptNumber: claim.attemptNumber,
        startedAt,
        durationMs: outcome.durationMs,
        outcome: outcome.delivered ? 'succeeded' : 'failed',
        responseStatus: outcome.statusCode,
        responseBody: outcome.responseBody,
        error: outcome.error,
      });
      const next = outcome.delivered ? null : nextAttemptAt(claim.attemptNumber, at, deps.retryScheduleMs);
      await settleDelivery(trx, {
        id: claim.id,
        leaseId: claim.leaseId,
        status: outcome.delivered ? 'succeeded' : next === null ? 'failed' : 'pending',
        nextAttemptAt: next,
        responseStatus: outcome.statusCode,
        error: outcome.error,
        at,
      });
      if (disabling(endpoint)) await disableFailing(trx, endpoint, outcome.error ?? 'unknown error', at);
    });
  }

  async function attempt(claim: ClaimedDelivery, signal: AbortSignal | undefined): Promise<void> {
    const startedAt = clock.now();
    const body = messageBody(claim.event);
    const outcome = await sendWebhook({
      url: claim.endpoint.url,
      headers: signedHeaders(claim.event, body, signingSecrets(claim.endpoint, startedAt), startedAt),
      body,
      policy: urlPolicyFor(claim.endpoint.environment, deps.allowPrivate),
      resolve,
      ...(signal === undefined ? {} : { signal }),
    });
    await settle(claim, startedAt, outcome);
  }

  /** Creates deliveries for events committed since the last run: one per (event, subscribed enabled endpoint). */
  async function fanOut(): Promise<number> {
    const now = clock.now();
    return inTransaction(db, async (trx) => {
      const events = await claimPendingEvents(trx, FAN_OUT_BATCH);
      if (events.length === 0) return 0;
      const endpoints = await listEnabledEndpointsOf(trx, [...new Set(events.map((e) => e.companyId))]);
      const rows = events.flatMap((event) =>
        endpoints
          .filter(
            (endpoint) =>
              endpoint.companyId === event.companyId &&
              endpoint.environment === event.environment &&
              subscribes(endpoint.eventTypes, event.type),
          )
          .map((endpoint) => ({
            reference: newDeliveryReference(),
            endpointId: endpoint.id,
            eventId: event.id,
            eventCreatedAt: event.createdAt,
            eventType: event.type,
          })),
      );
      await insertDeliveries(trx, rows, now);
      await deletePendingEvents(
        trx,
        events.map((e) => e.id),
      );
      return events.length;
    });
  }

  /** Claims up to `limit` due deliveries, fairly across endpoints (see claimDueDeliveries). */
  function claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = clock.now();
    return inTransaction(db, (trx) =>
      claimDueDeliveries(trx, {
        now,
        leaseUntil: new Date(now.getTime() + LEASE_MS),
        leaseId: randomUUID(),
        limit,
        perEndpoint: deps.endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
      }),
    );
  }

  const attemptLogged = (claimed: ClaimedDelivery, signal: AbortSignal | undefined): Promise<void> =>
    attempt(claimed, signal).catch((error: unknown) => {
      // An attempt that could not be recorded keeps its lease; it is made again when the lease ends.
      deps.logger?.error({ err: error }, 'webhook delivery attempt could not be recorded');
    });

  /** Attempts one batch of due deliveries, in parallel, each outside any transaction, and waits for them. */
  async function deliverDue(signal?: AbortSignal): Promise<number> {
    const claims = await claim(DELIVERY_BATCH);
    await Promise.all(claims.map((claimed) => attemptLogged(claimed, signal)));
    return claims.length;
  }

  // The worker's attempts in flight: started as slots free up, not batch after batch, so that a slow
  // receiver's attempt never holds back another's.
  const inFlight = new Set<Promise<void>>();
  const attempts = new AbortController();

  /** Starts attempts for the free slots of this process; returns how many it started. */
  async function dispatch(): Promise<number> {
    const free = MAX_IN_FLIGHT - inFlight.size;
    if (free <= 0) return 0;
    const claims = await claim(free);
    for (const claimed of claims) {
      const running = attemptLogged(claimed, attempts.signal).finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    return claims.length;
  }

  /** One pass of the worker: fan out, then start attempts, until no full batch is waiting. */
  async function runOnce(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const fanned = await fanOut();
      const started = signal?.aborted === true ? 0 : await dispatch();
      if ((fanned < FAN_OUT_BATCH && started === 0) || signal?.aborted === true) return;
    }
  }

  return {
    /** Registers an endpoint; its signing secret is in this answer only. */
    async create(tenant: Tenant, input: CreateWebhook): Promise<WebhookWithSecretView> {
      const url = await acceptableUrl(tenant, input.url);
      const eventTypes = subscription(input.events);
      const secret = formatSecret(randomBytes(SECRET_BYTES));
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        if ((await countEndpoints(trx, tenant)) >= MAX_ENDPOINTS_PER_TENANT)
          throw new AppError(
            'CONFLICT',
            `At most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints per company and environment`,
          );
        const endpoint = await insertEndpoint(trx, tenant, {
          reference: newEndpointReference(),
          url,
          description: input.description ?? null,
          eventTypes,
          secret,
          at: now,
        });
        return { ...endpointView(endpoint, now), secret };
      });
    },

    async list(tenant: Tenant): Promise<WebhookView[]> {
      const now = clock.now();
      return (await listEndpoints(db, tenant)).map((e) => endpointView(e, now));
    },

    async get(tenant: Tenant, reference: string): Promise<WebhookView> {
      return endpointView(await getEndpoint(db, tenant, reference), clock.now());
    },

    /**
     * Changes the URL, subscription, description or state. Enabling starts afresh (the failing
     * streak is forgotten); disabling ends the endpoint's pending deliveries.
     */
    async update(tenant: Tenant, reference: string, input: UpdateWebhook): Promise<WebhookView> {
      const url = input.url === undefined ? undefined : await acceptableUrl(tenant, input.url);
      const eventTypes = input.events === undefined ? undefined : subscription(input.events);
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const endpoint = await getEndpoint(trx, tenant, reference, true);
        const enabling = input.enabled === true && !endpoint.enabled;
        const disabling = input.enabled === false && endpoint.enabled;
        const updated = await updateEndpoint(trx, endpoint.id, {
          ...(url === undefined ? {} : { url }),
          ...(eventTypes === undefined ? {} : { eventTypes }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(enabling ? { enabled: true, disabledReason: null, failingSince: null } : {}),
          ...(disabling ? { enabled: false, disabledReason: 'manual' as const } : {}),
          at: now,
        });
        if (disabling) await cancelPendingDeliveries(trx, endpoint.id, 'the endpoint was disabled', now);
        return endpointView(updated, now);
      });
    },

    /** Deletes the endpoint with its delivery log; nothing more is sent to it. */
    async remove(tenant: Tenant, reference: string): Promise<void> {
      if (!(await deleteEndpoint(db, tenant, reference))) throw notFound('webhook endpoint');
    },

    /** A new signing secret, shown once; the old one keeps signing beside it for 24 hours. */
    async rotateSecret(tenant: Tenant, reference: string): Promise<WebhookWithSecretView> {
      const secret = formatSecret(randomBytes(SECRET_BYTES));
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const endpoint = await getEndpoint(trx, tenant, reference, true);
        const updated = await updateEndpoint(trx, endpoint.id, {
          secret,
          previousSecret: endpoint.secret,
          previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_VALID_MS),
          at: now,
        });
        return { ...endpointView(updated, now), secret };
      });
    },

    /** Records a `webhook.test` event and queues its delivery to this endpoint only. */
    async sendTest(tenant: Tenant, reference: string): Promise<{ event_id: string; delivery: DeliveryView }> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const endpoint = await getEndpoint(trx, tenant, reference, true);
        requireEnabled(endpoint);
        const eventId = await recordEvent(
          trx,
          { companyId: tenant.companyId, environment: tenant.environment },
          TEST_EVENT_TYPE,
          { webhook_id: endpoint.reference, message: 'A test event from Milepost.' },
          now,
        );
        await insertDeliveries(
          trx,
          [
            {
              reference: newDeliveryReference(),
              endpointId: endpoint.id,
              eventId,
              eventCreatedAt: now,
              eventType: TEST_EVENT_TYPE,
            },
          ],
          now,
        );
        return { event_id: eventId, delivery: await viewDeliveryOf(trx, tenant, eventId, endpoint.id) };
      });
    },

    /** An endpoint's deliveries, newest first, with every attempt. */
    async deliveries(
      tenant: Tenant,
      reference: string,
      page: { limit: number; after?: string | undefined; status?: DeliveryStatus | undefined },
    ): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
      await getEndpoint(db, tenant, reference);
      const before = page.after === undefined ? undefined : Number(page.after);
      if (before !== undefined && !Number.isSafeInteger(before))
        throw invalid('/querystring/after', 'is not a cursor from next_cursor');
      // One snapshot for the deliveries and their attempts: an attempt is written with its delivery's
      // new status in one transaction, and two separate reads could show the one without the other.
      return db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (trx) => {
          const rows = await listDeliveries(trx, tenant, reference, {
            limit: page.limit + 1,
            beforeSequence: before,
            status: page.status,
          });
          const shown = rows.slice(0, page.limit);
          const last = shown.at(-1);
          return {
            deliveries: await viewDeliveries(trx, shown),
            next_cursor: rows.length > page.limit && last !== undefined ? String(last.sequence) : null,
          };
        });
    },

    /** Makes one delivery due now: one more attempt, whatever its status. */
    async retryDelivery(tenant: Tenant, reference: string, deliveryReference: string): Promise<DeliveryView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const endpoint = await getEndpoint(trx, tenant, reference, true);
        const delivery = await findDelivery(trx, tenant, reference, deliveryReference);
        if (delivery === undefined) throw notFound('delivery');
        requireEnabled(endpoint);
        await requeueDelivery(trx, {
          reference: delivery.reference,
          endpointId: endpoint.id,
          eventId: delivery.eventId,
          eventCreatedAt: delivery.eventCreatedAt,
          eventType: delivery.eventType,
          at: now,
        });
        return viewDeliveryOf(trx, tenant, delivery.eventId, endpoint.id);
      });
    },

    /**
     * Sends an event again, with the same id: to one endpoint when named (even one not subscribed to
     * its type), else to every enabled endpoint that subscribes to it or already had it.
     */
    async replayEvent(
      tenant: Tenant,
      eventId: string,
      webhookReference: string | undefined,
    ): Promise<{ event_id: string; deliveries: DeliveryView[] }> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const event = await findEvent(trx, tenant, eventId);
        if (event === undefined) throw notFound('event');
        let targets: EndpointRecord[];
        if (webhookReference !== undefined) {
          const endpoint = await getEndpoint(trx, tenant, webhookReference, true);
          requireEnabled(endpoint);
          targets = [endpoint];
        } else {
          const had = await endpointsWithDeliveryOf(trx, event.id);
          targets = (await listEndpoints(trx, tenant)).filter(
            (e) =>
              e.enabled &&
              (had.has(e.id) || (event.type !== TEST_EVENT_TYPE && subscribes(e.eventTypes, event.type))),
          );
        }
        const deliveries: DeliveryView[] = [];
        for (const endpoint of targets) {
          await requeueDelivery(trx, {
            reference: newDeliveryReference(),
            endpointId: endpoint.id,
            eventId: event.id,
            eventCreatedAt: event.createdAt,
            eventType: event.type,
            at: now,
          });
          deliveries.push(await viewDeliveryOf(trx, tenant, event.id, endpoint.id));
        }
        return { event_id: event.id, deliveries };
      });
    },

    fanOut,
    deliverDue,
    runOnce,

    /** Housekeeping: forgets finished deliveries older than 30 days; returns how many. */
    purgeDeliveryLog: (now: Date): Promise<number> =>
      deleteSettledDeliveries(db, new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS)),

    /**
     * Housekeeping: events' monthly partitions created ahead; months past EVENT_RETENTION_DAYS whose
     * events are all fanned out and have no delivery pending dropped (see maintainEventPartitions).
     */
    maintainEventPartitions: (now: Date = clock.now()): Promise<PartitionMaintenance> =>
      maintainEventPartitions(db, now, deps.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS),

    /** Starts the worker's polling loop (worker role only). */
    async registerWorkers(): Promise<void> {
      poller ??= startPolling({
        intervalMs: deps.pollIntervalMs,
        run: runOnce,
        onError: (error) => deps.logger?.error({ err: error }, 'webhook worker pass failed'),
      });
    },

    /** Stops the loop, letting attempts in flight finish (up to `timeoutMs`) and record their result. */
    async stopWorkers(timeoutMs: number): Promise<void> {
      const running = poller;
      poller = undefined;
      await running?.stop(timeoutMs);
      if (inFlight.size === 0) return;
      const settled = Promise.all([...inFlight]);
      if (!(await settledWithin(settled, timeoutMs))) {
        // Attempts cut short are recorded as failures and retried later; one that cannot record in
        // time keeps its lease and is taken up again when the lease ends.
        attempts.abort();
        await settledWithin(settled, STOP_GRACE_MS);
      }
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
