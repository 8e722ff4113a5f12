import { inTransaction } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Tenant } from '../companies/index.ts';
import { TEST_EVENT_TYPE } from './rules/event-catalogue.ts';
import { subscribes } from './rules/subscriptions.ts';
import {
  getEndpoint,
  invalid,
  newDeliveryReference,
  requireEnabled,
  viewDeliveries,
  viewDeliveryOf,
  type WebhookContext,
} from './webhook-context.ts';
import {
  endpointsWithDeliveryOf,
  findDelivery,
  insertDeliveries,
  listDeliveries,
  requeueDelivery,
} from './webhook-delivery-repository.ts';
import { findEvent } from './webhook-event-repository.ts';
import { listEndpoints, type DeliveryStatus, type EndpointRecord } from './webhook-repository.ts';
import type { DeliveryView } from './webhook-schemas.ts';

/** Records a `webhook.test` event and queues its delivery to this endpoint only. */
async function sendTest(
  ctx: WebhookContext,
  tenant: Tenant,
  reference: string,
): Promise<{ event_id: string; delivery: DeliveryView }> {
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
}

/** An endpoint's deliveries, newest first, with every attempt. */
async function deliveries(
  ctx: WebhookContext,
  tenant: Tenant,
  reference: string,
  page: { limit: number; after?: string | undefined; status?: DeliveryStatus | undefined },
): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
  await getEndpoint(ctx.db, tenant, reference);
  const before = page.after === undefined ? undefined : Number(page.after);
  if (before !== undefined && !Number.isSafeInteger(before))
    throw invalid('/querystring/after', 'is not a cursor from next_cursor');
  // One snapshot for the deliveries and their attempts: an attempt is written with its delivery's
  // new status in one transaction, and two separate reads could show the one without the other.
  return ctx.db
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
}

/** Makes one delivery due now: one more attempt, whatever its status. */
async function retryDelivery(
  ctx: WebhookContext,
  tenant: Tenant,
  reference: string,
  deliveryReference: string,
): Promise<DeliveryView> {
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
}

/**
 * Sends an event again, with the same id: to one endpoint when named (even one not subscribed to its
 * type), else to every enabled endpoint that subscribes to it or already had it.
 */
async function replayEvent(
  ctx: WebhookContext,
  tenant: Tenant,
  eventId: string,
  webhookReference: string | undefined,
): Promise<{ event_id: string; deliveries: DeliveryView[] }> {
  const now = ctx.clock.now();
  return inTransaction(ctx.db, async (trx) => {
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
    const views: DeliveryView[] = [];
    for (const endpoint of targets) {
      await requeueDelivery(trx, {
        reference: newDeliveryReference(),
        endpointId: endpoint.id,
        eventId: event.id,
        eventCreatedAt: event.createdAt,
        eventType: event.type,
        at: now,
      });
      views.push(await viewDeliveryOf(trx, tenant, event.id, endpoint.id));
    }
    return { event_id: event.id, deliveries: views };
  });
}

/** Deliveries on request: the test event, the delivery log, a retry of one delivery, an event's replay. */
export function createDeliveryService(ctx: WebhookContext) {
  return {
    sendTest: (tenant: Tenant, reference: string) => sendTest(ctx, tenant, reference),
    deliveries: (
      tenant: Tenant,
      reference: string,
      page: { limit: number; after?: string | undefined; status?: DeliveryStatus | undefined },
    ) => deliveries(ctx, tenant, reference, page),
    retryDelivery: (tenant: Tenant, reference: string, deliveryReference: string) =>
      retryDelivery(ctx, tenant, reference, deliveryReference),
    replayEvent: (tenant: Tenant, eventId: string, webhookReference: string | undefined) =>
      replayEvent(ctx, tenant, eventId, webhookReference),
  };
}
