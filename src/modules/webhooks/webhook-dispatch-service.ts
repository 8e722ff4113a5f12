import { randomUUID } from 'node:crypto';
import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import type { PartitionMaintenance } from '../../platform/db/monthly-partitions.ts';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';
import { SpanKind, inSpan, recordFailure } from '../../platform/tracing.ts';
import { findCompanyContact } from '../companies/index.ts';
import { webhookEndpointDisabledEmail } from '../notifications/index.ts';
import { DEFAULT_EVENT_RETENTION_DAYS, maintainEventPartitions } from './event-partitions.ts';
import { messageBody, signedHeaders, signingSecrets } from './rules/message.ts';
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt, shouldDisableEndpoint } from './rules/retry-schedule.ts';
import { subscribes } from './rules/subscriptions.ts';
import { urlPolicyFor } from './rules/url-safety.ts';
import { newDeliveryReference, type WebhookContext } from './webhook-context.ts';
import {
  cancelPendingDeliveries,
  claimDueDeliveries,
  deleteSettledDeliveries,
  insertAttempt,
  insertDeliveries,
  settleDelivery,
  type ClaimedDelivery,
} from './webhook-delivery-repository.ts';
import { claimPendingEvents, deletePendingEvents } from './webhook-event-repository.ts';
import {
  listEnabledEndpointsOf,
  lockEndpoint,
  recordEndpointHealth,
  updateEndpoint,
  type EndpointRecord,
} from './webhook-repository.ts';
import { DELIVERY_TIMEOUT_MS, sendWebhook, type AttemptOutcome } from './webhook-sender.ts';

/** A claimed delivery is taken up again by any worker after this, if its attempt never reported back. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 45_000;
const FAN_OUT_BATCH = 200;
const DELIVERY_BATCH = 16;
/** Attempts in flight at once in one worker process, over every endpoint. */
const MAX_IN_FLIGHT = 64;
/** The delivery log keeps finished deliveries this long (the hourly housekeeping job deletes older ones). */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
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

/** Creates deliveries for events committed since the last run: one per (event, subscribed enabled endpoint). */
async function fanOut(ctx: WebhookContext): Promise<number> {
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
function claim(ctx: WebhookContext, limit: number): Promise<ClaimedDelivery[]> {
  const now = ctx.clock.now();
  return inTransaction(ctx.db, (trx) =>
    claimDueDeliveries(trx, {
      now,
      leaseUntil: new Date(now.getTime() + LEASE_MS),
      leaseId: randomUUID(),
      limit,
      perEndpoint: ctx.endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
    }),
  );
}

/** Switches off an endpoint that has failed every attempt for 3 days, and tells its company. */
async function disableFailing(
  ctx: WebhookContext,
  trx: Executor,
  endpoint: EndpointRecord,
  lastError: string,
  at: Date,
): Promise<void> {
  await updateEndpoint(trx, endpoint.id, { enabled: false, disabledReason: 'failing', at });
  await cancelPendingDeliveries(trx, endpoint.id, 'the endpoint was disabled after failing for 3 days', at);
  const company = await findCompanyContact(trx, endpoint.companyId);
  if (company === undefined || company.contactEmail === null) {
    ctx.logger?.warn(
      { webhook: endpoint.reference, company: endpoint.companyId },
      'webhook endpoint disabled after failing for 3 days; the company has no contact_email to tell',
    );
    return;
  }
  await ctx.notifications.queueEmail(
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
async function settle(
  ctx: WebhookContext,
  claimed: ClaimedDelivery,
  startedAt: Date,
  outcome: AttemptOutcome,
): Promise<void> {
  const at = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
    // NOTE: the endpoint's row before the delivery's, whenever both are locked: the order retry and
    // replay lock them in. The other order deadlocks against a replay of this delivery (PostgreSQL
    // ends one with a 500). Most settles lock only the delivery: see recordEndpointHealth.
    let endpoint = await recordEndpointHealth(trx, claimed.endpoint.id, outcome.delivered, startedAt);
    const disabling = (e: EndpointRecord | undefined): e is EndpointRecord =>
      e !== undefined && e.enabled && !outcome.delivered && shouldDisableEndpoint(e.failingSince, at);
    // Read without a lock: confirm under the row's lock, taken before the delivery's.
    if (disabling(endpoint)) endpoint = await lockEndpoint(trx, claimed.endpoint.id);
    await insertAttempt(trx, claimed.id, {
      attemptNumber: claimed.attemptNumber,
      startedAt,
      durationMs: outcome.durationMs,
      outcome: outcome.delivered ? 'succeeded' : 'failed',
      responseStatus: outcome.statusCode,
      responseBody: outcome.responseBody,
      error: outcome.error,
    });
    const next = outcome.delivered ? null : nextAttemptAt(claimed.attemptNumber, at, ctx.retryScheduleMs);
    await settleDelivery(trx, {
      id: claimed.id,
      leaseId: claimed.leaseId,
      status: outcome.delivered ? 'succeeded' : next === null ? 'failed' : 'pending',
      nextAttemptAt: next,
      responseStatus: outcome.statusCode,
      error: outcome.error,
      at,
    });
    if (disabling(endpoint)) await disableFailing(ctx, trx, endpoint, outcome.error ?? 'unknown error', at);
  });
}

/**
 * One signed attempt of a claimed delivery, outside any transaction, then its outcome recorded; traced
 * (tracing on) as a `webhooks deliver` span holding the POST's CLIENT span and the statements recording it.
 */
function attempt(
  ctx: WebhookContext,
  claimed: ClaimedDelivery,
  signal: AbortSignal | undefined,
): Promise<void> {
  const attributes = { 'webhook.event_type': claimed.event.type, 'webhook.attempt': claimed.attemptNumber };
  return inSpan('webhooks deliver', { attributes }, async () => {
    const startedAt = ctx.clock.now();
    const body = messageBody(claimed.event);
    // The endpoint's host only: its path and query are the company's, and may carry a token.
    const host = URL.parse(claimed.endpoint.url)?.hostname ?? 'invalid';
    const post = { 'http.request.method': 'POST', 'server.address': host };
    const outcome = await inSpan('POST', { kind: SpanKind.CLIENT, attributes: post }, async (span) => {
      const sent = await sendWebhook({
        url: claimed.endpoint.url,
        headers: signedHeaders(claimed.event, body, signingSecrets(claimed.endpoint, startedAt), startedAt),
        body,
        policy: urlPolicyFor(claimed.endpoint.environment, ctx.allowPrivate),
        resolve: ctx.resolve,
        ...(signal === undefined ? {} : { signal }),
      });
      if (span !== undefined) {
        if (sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
        if (!sent.delivered)
          recordFailure(span, { code: sent.statusCode === null ? 'no_answer' : String(sent.statusCode) });
      }
      return sent;
    });
    await settle(ctx, claimed, startedAt, outcome);
  });
}

const attemptLogged = (
  ctx: WebhookContext,
  claimed: ClaimedDelivery,
  signal: AbortSignal | undefined,
): Promise<void> =>
  attempt(ctx, claimed, signal).catch((error: unknown) => {
    // An attempt that could not be recorded keeps its lease; it is made again when the lease ends.
    ctx.logger?.error({ err: error }, 'webhook delivery attempt could not be recorded');
  });

/**
 * The worker's side: the fan-out of committed events to deliveries, signed attempts with retries, the
 * polling loop that runs both, and the housekeeping of the delivery log and the events' partitions.
 */
export function createDispatchService(ctx: WebhookContext) {
  let poller: Poller | undefined;
  // The worker's attempts in flight: started as slots free up, not batch after batch, so that a slow
  // receiver's attempt never holds back another's.
  const inFlight = new Set<Promise<void>>();
  const attempts = new AbortController();

  /** Starts attempts for the free slots of this process; returns how many it started. */
  async function dispatch(): Promise<number> {
    const free = MAX_IN_FLIGHT - inFlight.size;
    if (free <= 0) return 0;
    const claims = await claim(ctx, free);
    for (const claimed of claims) {
      const running = attemptLogged(ctx, claimed, attempts.signal).finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    return claims.length;
  }

  /** One pass of the worker: fan out, then start attempts, until no full batch is waiting. */
  async function runOnce(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const fanned = await fanOut(ctx);
      const started = signal?.aborted === true ? 0 : await dispatch();
      if ((fanned < FAN_OUT_BATCH && started === 0) || signal?.aborted === true) return;
    }
  }

  return {
    fanOut: () => fanOut(ctx),

    /** Attempts one batch of due deliveries, in parallel, each outside any transaction, and waits for them. */
    async deliverDue(signal?: AbortSignal): Promise<number> {
      const claims = await claim(ctx, DELIVERY_BATCH);
      await Promise.all(claims.map((claimed) => attemptLogged(ctx, claimed, signal)));
      return claims.length;
    },

    runOnce,

    /** Housekeeping: forgets finished deliveries older than 30 days; returns how many. */
    purgeDeliveryLog: (now: Date): Promise<number> =>
      deleteSettledDeliveries(ctx.db, new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS)),

    /**
     * Housekeeping: events' monthly partitions created ahead; months past EVENT_RETENTION_DAYS whose
     * events are all fanned out and have no delivery pending dropped (see maintainEventPartitions).
     */
    maintainEventPartitions: (now: Date = ctx.clock.now()): Promise<PartitionMaintenance> =>
      maintainEventPartitions(ctx.db, now, ctx.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS),

    /** Starts the worker's polling loop (worker role only). */
    async registerWorkers(): Promise<void> {
      poller ??= startPolling({
        intervalMs: ctx.pollIntervalMs,
        run: runOnce,
        onError: (error) => ctx.logger?.error({ err: error }, 'webhook worker pass failed'),
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
