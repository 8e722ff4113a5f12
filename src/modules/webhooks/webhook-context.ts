import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken } from '../../platform/crypto.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import { signingSecrets } from './rules/message.ts';
import {
  findDeliveryOf,
  listAttempts,
  type AttemptRecord,
  type DeliveryRecord,
} from './webhook-delivery-repository.ts';
import { findEndpoint, type EndpointRecord } from './webhook-repository.ts';
import type { DeliveryView, WebhookView } from './webhook-schemas.ts';
import { systemResolver, type Resolver } from './webhook-sender.ts';

export interface WebhookLogger {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** What the webhook service is built from (see `createWebhookService`). */
export interface WebhookDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly notifications: NotificationService;
  /** WEBHOOKS_ALLOW_PRIVATE: sandbox endpoints may be http and private. Production never. */
  readonly allowPrivate: boolean;
  readonly retryScheduleMs: readonly number[];
  readonly pollIntervalMs: number;
  /** Attempts in flight at once to one endpoint, across workers (WEBHOOKS_ENDPOINT_CONCURRENCY). */
  readonly endpointConcurrency?: number;
  /** Days events are kept before their month may be dropped (EVENT_RETENTION_DAYS). */
  readonly eventRetentionDays?: number;
  readonly resolve?: Resolver;
  readonly logger?: WebhookLogger;
}

/** The dependencies every use case of the webhook service shares, with the resolver chosen. */
export interface WebhookContext extends WebhookDeps {
  readonly resolve: Resolver;
}

export const createWebhookContext = (deps: WebhookDeps): WebhookContext => ({
  ...deps,
  resolve: deps.resolve ?? systemResolver,
});

export const newDeliveryReference = (): string => randomToken('wd_', 12);

/** A 422 naming the field (`/body/url`) and what is wrong with it. */
export const invalid = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', `${path.replace(/^\/body\//, '')} ${message}`, {
    errors: [{ path, message }],
  });

const iso = (at: Date | null): string | null => at?.toISOString() ?? null;

/** An endpoint as the API shows it (never its secrets). */
export function endpointView(endpoint: EndpointRecord, now: Date): WebhookView {
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

/** The tenant's endpoint by reference (`lock`: its row lock for a read-modify-write); 404 when none. */
export async function getEndpoint(
  trx: Executor,
  tenant: Tenant,
  reference: string,
  lock = false,
): Promise<EndpointRecord> {
  const endpoint = await findEndpoint(trx, tenant, reference, lock);
  if (endpoint === undefined) throw notFound('webhook endpoint');
  return endpoint;
}

/** Deliveries as the API shows them, each with its attempts (one query for all of them). */
export async function viewDeliveries(
  trx: Executor,
  deliveries: readonly DeliveryRecord[],
): Promise<DeliveryView[]> {
  const attempts = await listAttempts(
    trx,
    deliveries.map((d) => d.id),
  );
  return deliveries.map((d) => deliveryView(d, attempts.get(d.id) ?? []));
}

/** The (event, endpoint) delivery just written in this transaction, as the API shows it. */
export async function viewDeliveryOf(
  trx: Executor,
  tenant: Tenant,
  eventId: string,
  endpointId: string,
): Promise<DeliveryView> {
  const delivery = await findDeliveryOf(trx, tenant, eventId, endpointId);
  if (delivery === undefined) throw new AppError('INTERNAL', 'delivery vanished in its own transaction');
  const [view] = await viewDeliveries(trx, [delivery]);
  if (view === undefined) throw new AppError('INTERNAL', 'delivery vanished in its own transaction');
  return view;
}

/** 409 for a disabled endpoint: nothing is sent to it until it is enabled. */
export const requireEnabled = (endpoint: EndpointRecord): void => {
  if (!endpoint.enabled)
    throw new AppError(
      'CONFLICT',
      'The webhook endpoint is disabled; enable it with PATCH /webhooks/{id} {"enabled": true} first',
    );
};
