import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { listEventsByKey } from '../../platform/events-lookups.ts';
import type { EventRecord } from './webhook-event-repository.ts';
import {
  endpointColumns,
  toEndpoint,
  type DeliveryStatus,
  type EndpointRecord,
} from './webhook-repository.ts';

/* Deliveries of events to endpoints, their claims by the workers, and the attempts' log. */

export interface AttemptRecord {
  readonly attemptNumber: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly outcome: 'succeeded' | 'failed';
  readonly responseStatus: number | null;
  readonly responseBody: string | null;
  readonly error: string | null;
}

export interface DeliveryRecord {
  readonly id: string;
  readonly reference: string;
  readonly sequence: number;
  readonly endpointReference: string;
  readonly eventId: string;
  readonly eventCreatedAt: Date;
  readonly eventType: string;
  readonly status: DeliveryStatus;
  readonly attemptCount: number;
  readonly nextAttemptAt: Date | null;
  readonly lastAttemptAt: Date | null;
  readonly lastResponseStatus: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: Date | null;
  readonly createdAt: Date;
}

/** New deliveries, due at `at`; an (event, endpoint) pair that already has one is left alone. */
export async function insertDeliveries(
  db: Executor,
  rows: ReadonlyArray<{
    reference: string;
    endpointId: string;
    eventId: string;
    eventCreatedAt: Date;
    eventType: string;
  }>,
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(
      rows.map((r) => ({
        delivery_reference: r.reference,
        endpoint_id: r.endpointId,
        event_id: r.eventId,
        event_created_at: r.eventCreatedAt,
        event_type: r.eventType,
        status: 'pending' as const,
        next_attempt_at: at,
        created_at: at,
        updated_at: at,
      })),
    )
    .onConflict((oc) => oc.constraint('webhook_deliveries_event_endpoint_key').doNothing())
    .execute();
}

/**
 * Makes the (event, endpoint) delivery due now, creating it if there is none: the retry and replay
 * routes. Any attempt in flight loses its lease, so its result no longer decides the status.
 */
export async function requeueDelivery(
  db: Executor,
  values: {
    reference: string;
    endpointId: string;
    eventId: string;
    eventCreatedAt: Date;
    eventType: string;
    at: Date;
  },
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({
      delivery_reference: values.reference,
      endpoint_id: values.endpointId,
      event_id: values.eventId,
      event_created_at: values.eventCreatedAt,
      event_type: values.eventType,
      status: 'pending',
      next_attempt_at: values.at,
      created_at: values.at,
      updated_at: values.at,
    })
    .onConflict((oc) =>
      oc.constraint('webhook_deliveries_event_endpoint_key').doUpdateSet({
        status: 'pending',
        next_attempt_at: values.at,
        lease_id: null,
        updated_at: values.at,
      }),
    )
    .execute();
}

/** Ends every pending delivery of a disabled endpoint, so nothing waits on it for ever. */
export async function cancelPendingDeliveries(
  db: Executor,
  endpointId: string,
  reason: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, lease_id: null, last_error: reason, updated_at: at })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

export interface ClaimedDelivery {
  readonly id: string;
  readonly leaseId: string;
  readonly attemptNumber: number;
  readonly endpoint: EndpointRecord;
  readonly event: EventRecord;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for one attempt each: counts the attempt
 * and moves `next_attempt_at` to the end of a lease, so that if this worker dies mid-attempt another
 * takes the delivery up again once the lease ends (at-least-once). SKIP LOCKED lets workers share the work.
 */
export async function claimDueDeliveries(
  db: Executor,
  values: { now: Date; leaseUntil: Date; leaseId: string; limit: number; perEndpoint: number },
): Promise<ClaimedDelivery[]> {
  // NOTE: fair across endpoints. Each endpoint has at most `perEndpoint` attempts in flight, counted
  // across every worker (a claimed attempt is a pending delivery holding a lease), and the first due
  // delivery of every endpoint comes before the second of any: a slow or dead receiver, however long
  // its backlog, takes its own slots and no one else's.
  const candidates = await sql<{ id: string }>`
    with in_flight as (
      select endpoint_id, count(*)::int as n from webhook_deliveries
      where status = 'pending' and lease_id is not null and next_attempt_at > ${values.now}
      group by endpoint_id
    ), ranked as (
      select d.id, d.endpoint_id, d.next_attempt_at,
        row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as rank
      from webhook_deliveries d
      join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and d.next_attempt_at <= ${values.now} and e.enabled
    )
    select r.id from ranked r left join in_flight f on f.endpoint_id = r.endpoint_id
    where r.rank + coalesce(f.n, 0) <= ${values.perEndpoint}
    order by r.rank, r.next_attempt_at
    limit ${values.limit}`.execute(db);
  if (candidates.rows.length === 0) return [];
  const due = db
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where(
      'd.id',
      'in',
      candidates.rows.map((r) => r.id),
    )
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', values.now)
    .forUpdate('d')
    .skipLocked();
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempt_count: eb('attempt_count', '+', 1),
      lease_id: values.leaseId,
      next_attempt_at: values.leaseUntil,
      last_attempt_at: values.now,
      updated_at: values.now,
    }))
    .where('id', 'in', due)
    .returning(['id', 'attempt_count', 'endpoint_id', 'event_id', 'event_created_at'])
    .execute();
  if (claimed.length === 0) return [];
  const endpoints = await db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where('id', 'in', [...new Set(claimed.map((c) => c.endpoint_id))])
    .execute();
  const events = await listEventsByKey(db, claimed, [
    'id',
    'company_id',
    'environment',
    'type',
    'data',
    'created_at',
  ]);
  const endpointById = new Map(endpoints.map((row) => [row.id, toEndpoint(row)]));
  const eventById = new Map(events.map((row) => [row.id, row]));
  // NOTE: no foreign key holds a delivery's event (migration 0033). Should one be gone all the same,
  // its delivery ends here rather than being taken up again at every lease's end.
  const orphans = claimed.filter((c) => !eventById.has(c.event_id)).map((c) => c.id);
  if (orphans.length > 0)
    await db
      .updateTable('webhook_deliveries')
      .set({
        status: 'failed',
        next_attempt_at: null,
        lease_id: null,
        last_error: 'the event is no longer kept',
      })
      .where('id', 'in', orphans)
      .execute();
  return claimed.flatMap((c) => {
    const endpoint = endpointById.get(c.endpoint_id);
    const event = eventById.get(c.event_id);
    if (endpoint === undefined || event === undefined) return [];
    return [
      {
        id: c.id,
        leaseId: values.leaseId,
        attemptNumber: c.attempt_count,
        endpoint,
        event: {
          id: event.id,
          companyId: event.company_id,
          environment: event.environment as DataEnvironment,
          type: event.type,
          data: event.data,
          createdAt: event.created_at,
        },
      },
    ];
  });
}

export async function insertAttempt(db: Executor, deliveryId: string, attempt: AttemptRecord): Promise<void> {
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_id: deliveryId,
      attempt_number: attempt.attemptNumber,
      started_at: attempt.startedAt,
      duration_ms: attempt.durationMs,
      outcome: attempt.outcome,
      response_status: attempt.responseStatus,
      response_body: attempt.responseBody,
      error: attempt.error === null ? null : attempt.error.slice(0, 1000),
    })
    .onConflict((oc) => oc.constraint('webhook_delivery_attempts_number_key').doNothing())
    .execute();
}

/**
 * Records the result of the attempt that holds `leaseId`. Returns false when the lease was lost (a
 * manual retry or another worker took the delivery over): the newer attempt decides the status.
 */
export async function settleDelivery(
  db: Executor,
  values: {
    id: string;
    leaseId: string;
    status: DeliveryStatus;
    nextAttemptAt: Date | null;
    responseStatus: number | null;
    error: string | null;
    at: Date;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: values.status,
      next_attempt_at: values.nextAttemptAt,
      lease_id: null,
      last_response_status: values.responseStatus,
      last_error: values.error === null ? null : values.error.slice(0, 1000),
      ...(values.status === 'succeeded' ? { delivered_at: values.at } : {}),
      updated_at: values.at,
    })
    .where('id', '=', values.id)
    .where('lease_id', '=', values.leaseId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

const deliveryColumns = [
  'd.id',
  'd.delivery_reference',
  'd.sequence',
  'e.endpoint_reference',
  'd.event_id',
  'd.event_created_at',
  'd.event_type',
  'd.status',
  'd.attempt_count',
  'd.next_attempt_at',
  'd.last_attempt_at',
  'd.last_response_status',
  'd.last_error',
  'd.delivered_at',
  'd.created_at',
] as const;

function tenantDeliveries(db: Executor, tenant: Tenant) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .where(forTenant(tenant, 'e'));
}

function toDelivery(row: {
  id: string;
  delivery_reference: string;
  sequence: number;
  endpoint_reference: string;
  event_id: string;
  event_created_at: Date;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}): DeliveryRecord {
  return {
    id: row.id,
    reference: row.delivery_reference,
    sequence: row.sequence,
    endpointReference: row.endpoint_reference,
    eventId: row.event_id,
    eventCreatedAt: row.event_created_at,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  };
}

/** An endpoint's deliveries, newest first, paged by `sequence`. */
export async function listDeliveries(
  db: Executor,
  tenant: Tenant,
  endpointReference: string,
  page: { limit: number; beforeSequence?: number | undefined; status?: DeliveryStatus | undefined },
): Promise<DeliveryRecord[]> {
  let query = tenantDeliveries(db, tenant)
    .select(deliveryColumns)
    .where('e.endpoint_reference', '=', endpointReference)
    .orderBy('d.sequence', 'desc')
    .limit(page.limit);
  if (page.beforeSequence !== undefined) query = query.where('d.sequence', '<', page.beforeSequence);
  if (page.status !== undefined) query = query.where('d.status', '=', page.status);
  return (await query.execute()).map(toDelivery);
}

export async function findDelivery(
  db: Executor,
  tenant: Tenant,
  endpointReference: string,
  deliveryReference: string,
): Promise<DeliveryRecord | undefined> {
  const row = await tenantDeliveries(db, tenant)
    .select(deliveryColumns)
    .where('e.endpoint_reference', '=', endpointReference)
    .where('d.delivery_reference', '=', deliveryReference)
    .executeTakeFirst();
  return row === undefined ? undefined : toDelivery(row);
}

export async function findDeliveryOf(
  db: Executor,
  tenant: Tenant,
  eventId: string,
  endpointId: string,
): Promise<DeliveryRecord | undefined> {
  const row = await tenantDeliveries(db, tenant)
    .select(deliveryColumns)
    .where('d.event_id', '=', eventId)
    .where('d.endpoint_id', '=', endpointId)
    .executeTakeFirst();
  return row === undefined ? undefined : toDelivery(row);
}

/** Endpoint ids that already have a delivery of this event. */
export async function endpointsWithDeliveryOf(db: Executor, eventId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('endpoint_id')
    .where('event_id', '=', eventId)
    .execute();
  return new Set(rows.map((r) => r.endpoint_id));
}

/** Attempts of the given deliveries, oldest first, grouped by delivery id. */
export async function listAttempts(
  db: Executor,
  deliveryIds: readonly string[],
): Promise<Map<string, AttemptRecord[]>> {
  const grouped = new Map<string, AttemptRecord[]>();
  if (deliveryIds.length === 0) return grouped;
  const rows = await db
    .selectFrom('webhook_delivery_attempts')
    .select([
      'delivery_id',
      'attempt_number',
      'started_at',
      'duration_ms',
      'outcome',
      'response_status',
      'response_body',
      'error',
    ])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt_number')
    .execute();
  for (const row of rows) {
    const list = grouped.get(row.delivery_id) ?? [];
    list.push({
      attemptNumber: row.attempt_number,
      startedAt: row.started_at,
      durationMs: row.duration_ms,
      outcome: row.outcome,
      responseStatus: row.response_status,
      responseBody: row.response_body,
      error: row.error,
    });
    grouped.set(row.delivery_id, list);
  }
  return grouped;
}

/** Deletes finished deliveries (and their attempts) last touched before `cutoff`; returns how many. */
export async function deleteSettledDeliveries(db: Executor, cutoff: Date): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '!=', 'pending')
    .where('updated_at', '<', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
