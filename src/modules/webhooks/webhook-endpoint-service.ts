import { randomBytes } from 'node:crypto';
import { randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import { SUBSCRIBABLE_EVENT_TYPES } from './rules/event-catalogue.ts';
import { formatSecret, SECRET_BYTES } from './rules/message.ts';
import { normaliseSubscription } from './rules/subscriptions.ts';
import { checkEndpointUrl, classifyAddress, urlPolicyFor } from './rules/url-safety.ts';
import { cancelPendingDeliveries } from './webhook-delivery-repository.ts';
import { endpointView, getEndpoint, invalid, type WebhookContext } from './webhook-context.ts';
import {
  countEndpoints,
  deleteEndpoint,
  insertEndpoint,
  listEndpoints,
  updateEndpoint,
} from './webhook-repository.ts';
import type { CreateWebhook, UpdateWebhook, WebhookView, WebhookWithSecretView } from './webhook-schemas.ts';
import { checkResolvedHost, isUnknownName } from './webhook-sender.ts';

/** Endpoints per company and environment: every event is sent once per endpoint. */
export const MAX_ENDPOINTS_PER_TENANT = 20;
/** After a rotation the old secret keeps signing, beside the new one, for this long. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3_600_000;
/** Registration gives up on DNS after this; the address is checked again at every delivery anyway. */
const REGISTRATION_DNS_TIMEOUT_MS = 2_000;

const newEndpointReference = (): string => randomToken('we_', 12);

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([
    work,
    new Promise<'timeout'>((resolve) => {
      setTimeout(resolve, ms, 'timeout').unref();
    }),
  ]);

/** The URL as stored (normalised by the URL parser), or a 422 naming the rule it breaks. */
async function acceptableUrl(ctx: WebhookContext, tenant: Tenant, raw: string): Promise<string> {
  const policy = urlPolicyFor(tenant.environment, ctx.allowPrivate);
  const check = checkEndpointUrl(raw, policy);
  if (!check.ok) throw invalid('/body/url', check.reason);
  const host = check.url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && classifyAddress(host) === undefined) {
    // Every delivery checks the addresses it connects to again; this catches mistakes early.
    const resolved = await withTimeout(
      checkResolvedHost(host, policy, ctx.resolve).catch((error: unknown) =>
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

/** The event types subscribed to (null: every type), or a 422 naming each unknown one. */
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

/** Registers an endpoint; its signing secret is in this answer only. */
async function create(
  ctx: WebhookContext,
  tenant: Tenant,
  input: CreateWebhook,
): Promise<WebhookWithSecretView> {
  const url = await acceptableUrl(ctx, tenant, input.url);
  const eventTypes = subscription(input.events);
  const secret = formatSecret(randomBytes(SECRET_BYTES));
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
}

/**
 * Changes the URL, subscription, description or state. Enabling starts afresh (the failing streak
 * is forgotten); disabling ends the endpoint's pending deliveries.
 */
async function update(
  ctx: WebhookContext,
  tenant: Tenant,
  reference: string,
  input: UpdateWebhook,
): Promise<WebhookView> {
  const url = input.url === undefined ? undefined : await acceptableUrl(ctx, tenant, input.url);
  const eventTypes = input.events === undefined ? undefined : subscription(input.events);
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
}

/** A new signing secret, shown once; the old one keeps signing beside it for 24 hours. */
async function rotateSecret(
  ctx: WebhookContext,
  tenant: Tenant,
  reference: string,
): Promise<WebhookWithSecretView> {
  const secret = formatSecret(randomBytes(SECRET_BYTES));
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
    const endpoint = await getEndpoint(trx, tenant, reference, true);
    const updated = await updateEndpoint(trx, endpoint.id, {
      secret,
      previousSecret: endpoint.secret,
      previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_VALID_MS),
      at: now,
    });
    return { ...endpointView(updated, now), secret };
  });
}

/** A tenant's webhook endpoints: registration, reads, changes, deletion and secret rotation. */
export function createEndpointService(ctx: WebhookContext) {
  const { db, clock } = ctx;
  return {
    create: (tenant: Tenant, input: CreateWebhook) => create(ctx, tenant, input),

    async list(tenant: Tenant): Promise<WebhookView[]> {
      const now = clock.now();
      return (await listEndpoints(db, tenant)).map((e) => endpointView(e, now));
    },

    async get(tenant: Tenant, reference: string): Promise<WebhookView> {
      return endpointView(await getEndpoint(db, tenant, reference), clock.now());
    },

    update: (tenant: Tenant, reference: string, input: UpdateWebhook) =>
      update(ctx, tenant, reference, input),

    /** Deletes the endpoint with its delivery log; nothing more is sent to it. */
    async remove(tenant: Tenant, reference: string): Promise<void> {
      if (!(await deleteEndpoint(db, tenant, reference))) throw notFound('webhook endpoint');
    },

    rotateSecret: (tenant: Tenant, reference: string) => rotateSecret(ctx, tenant, reference),
  };
}
