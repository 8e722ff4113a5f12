import { sql, type Generated } from 'kysely';
import type { BatchedCall } from '../../platform/db/batched-calls.ts';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { UsageUnit } from '../policies/index.ts';

export interface JourneyTables {
  journeys: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    policy_id: string;
    policy_reference: string;
    policy_version_id: string;
    provider_reference: string | null;
    route: string;
    route_precision: number;
    point_count: number;
    start_at: Date;
    end_at: Date;
    distance_metres: number;
    distance_unit: UsageUnit;
    /** numeric: exact decimal text. */
    usage_rate: string;
    usage_premium_pence: number;
    start_lat: number | null;
    start_lng: number | null;
    end_lat: number | null;
    end_lng: number | null;
    start_name: string | null;
    start_postcode: string | null;
    end_name: string | null;
    end_postcode: string | null;
    is_void: Generated<boolean>;
    voided_at: Date | null;
    void_reason: string | null;
    /** Set by statements when a statement bills the journey (no foreign key: migration 0009). */
    statement_version_id: string | null;
    created_at: Date;
    /** Stored after a statement already covered its start: the next statement bills it. */
    late: Generated<boolean>;
    source: Generated<JourneySource>;
    /** The device whose positions the trip was cut from, or whose silence was estimated. */
    device_id: string | null;
    gap_distance_metres: Generated<number>;
  };
  /** What store_journey's reference and overlap checks read, a row per journey (migration 0066). */
  journey_keys: {
    policy_id: string;
    journey_id: string;
    start_at: Date;
    end_at: Date;
    /** While taken: a client's journey's for good, a device trip's or an estimate's until voided. */
    provider_reference: string | null;
    /** Not void and longer than an instant: the journey counts for the overlap check. */
    live: boolean;
  };
  journey_voids: {
    id: Generated<string>;
    journey_id: string;
    policy_id: string;
    company_id: string;
    environment: string;
    reason: string;
    billed_statement_version_id: string | null;
    credited_statement_version_id: string | null;
    usage_premium_pence: number;
    request_id: string | null;
    created_at: Date;
  };
}

/** Where a journey came from: posted by a client, cut from a device's positions, or made by the service. */
export type JourneySource = 'api' | 'device' | 'estimate' | 'odometer_reconciliation';

export interface PlaceRecord {
  /** Null for a journey without a route (an estimate, a reconciliation) where no place was known. */
  readonly lat: number | null;
  readonly lng: number | null;
  readonly name: string | null;
  readonly postcode: string | null;
}

export interface JourneyRecord {
  readonly id: string;
  readonly policyId: string;
  readonly policyReference: string;
  readonly policyVersionId: string;
  readonly providerReference: string | null;
  readonly route: string;
  readonly precision: 5 | 6;
  readonly pointCount: number;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly distanceMetres: number;
  readonly distanceUnit: UsageUnit;
  /** Exact decimal text, e.g. "0.045000" or "0.045". */
  readonly usageRate: string;
  readonly usagePremiumPence: number;
  readonly start: PlaceRecord;
  readonly end: PlaceRecord;
  readonly isVoid: boolean;
  readonly voidedAt: Date | null;
  readonly voidReason: string | null;
  readonly statementVersionId: string | null;
  readonly createdAt: Date;
  readonly source: JourneySource;
  readonly deviceId: string | null;
  /** Part of distanceMetres bridged in a straight line across gaps in a device's data. */
  readonly gapDistanceMetres: number;
}

export type NewJourney = Omit<
  JourneyRecord,
  'id' | 'isVoid' | 'voidedAt' | 'voidReason' | 'statementVersionId'
>;

/**
 * The statement that billed a journey, from its row (migration 0014): the one fixed on the row (a late
 * upload claimed, a billed journey voided), else the first of its policy whose period holds its start,
 * unless it was uploaded late or voided unbilled.
 */
export const billedByStatement = sql<
  string | null
>`journey_statement(statement_version_id, late, is_void, policy_id, start_at)`;

const columns = [
  'id',
  'policy_id',
  'policy_reference',
  'policy_version_id',
  'provider_reference',
  'route',
  'route_precision',
  'point_count',
  'start_at',
  'end_at',
  'distance_metres',
  'distance_unit',
  'usage_rate',
  'usage_premium_pence',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_name',
  'start_postcode',
  'end_name',
  'end_postcode',
  'is_void',
  'voided_at',
  'void_reason',
  billedByStatement.as('statement_version_id'),
  'created_at',
  'source',
  'device_id',
  'gap_distance_metres',
] as const;

interface JourneyRow {
  id: string;
  policy_id: string;
  policy_reference: string;
  policy_version_id: string;
  provider_reference: string | null;
  route: string;
  route_precision: number;
  point_count: number;
  start_at: Date;
  end_at: Date;
  distance_metres: number;
  distance_unit: UsageUnit;
  usage_rate: string;
  usage_premium_pence: number;
  start_lat: number | null;
  start_lng: number | null;
  end_lat: number | null;
  end_lng: number | null;
  start_name: string | null;
  start_postcode: string | null;
  end_name: string | null;
  end_postcode: string | null;
  is_void: boolean;
  voided_at: Date | null;
  void_reason: string | null;
  statement_version_id: string | null;
  created_at: Date;
  source: JourneySource;
  device_id: string | null;
  gap_distance_metres: number;
}

const toJourney = (row: JourneyRow): JourneyRecord => ({
  id: row.id,
  policyId: row.policy_id,
  policyReference: row.policy_reference,
  policyVersionId: row.policy_version_id,
  providerReference: row.provider_reference,
  route: row.route,
  precision: row.route_precision === 6 ? 6 : 5,
  pointCount: row.point_count,
  startAt: row.start_at,
  endAt: row.end_at,
  distanceMetres: row.distance_metres,
  distanceUnit: row.distance_unit,
  usageRate: row.usage_rate,
  usagePremiumPence: row.usage_premium_pence,
  start: { lat: row.start_lat, lng: row.start_lng, name: row.start_name, postcode: row.start_postcode },
  end: { lat: row.end_lat, lng: row.end_lng, name: row.end_name, postcode: row.end_postcode },
  isVoid: row.is_void,
  voidedAt: row.voided_at,
  voidReason: row.void_reason,
  statementVersionId: row.statement_version_id,
  createdAt: row.created_at,
  source: row.source,
  deviceId: row.device_id,
  gapDistanceMetres: row.gap_distance_metres,
});

export interface JourneyEvent {
  readonly type: string;
  readonly data: object;
}

/** Why a journey was not stored. */
export type NotStored = 'VERSIONS_CHANGED' | 'TAKEN';

/** `store_journey`'s arguments. */
export const STORE_JOURNEY_ARITY = 31;

/**
 * Stores a journey and its event in one statement through `store_journey` (migrations 0011, 0025, 0066):
 * as its own transaction, for a client's journey (one round trip, shared with the client journeys
 * arriving meanwhile: `batchedCalls`), or in `trx` for the
 * service's own (a re-cut voids and stores in one transaction). Not stored when the policy's versions
 * moved on from `versionCount` (VERSIONS_CHANGED: the journey was rated on terms no longer complete), or
 * when the journey overlaps a non-void one of the policy (checked under the policy's row lock) or reuses
 * its `provider_reference` (the unique key of `journey_keys`): TAKEN, and the caller tells which.
 */
export async function storeJourney(
  on: { storeJourney: BatchedCall } | { trx: Executor },
  tenant: Tenant,
  journey: NewJourney & { readonly id: string },
  guards: { readonly versionCount: number },
  event: JourneyEvent,
): Promise<JourneyRecord | NotStored> {
  // In the function's parameter order.
  const values = [
    journey.id,
    tenant.companyId,
    tenant.environment,
    journey.policyId,
    journey.policyReference,
    journey.policyVersionId,
    journey.providerReference,
    journey.route,
    journey.precision,
    journey.pointCount,
    journey.startAt,
    journey.endAt,
    journey.distanceMetres,
    journey.distanceUnit,
    journey.usageRate,
    journey.usagePremiumPence,
    journey.start.lat,
    journey.start.lng,
    journey.end.lat,
    journey.end.lng,
    journey.start.name,
    journey.start.postcode,
    journey.end.name,
    journey.end.postcode,
    journey.createdAt,
    guards.versionCount,
    event.type,
    JSON.stringify(event.data),
    journey.source,
    journey.deviceId,
    journey.gapDistanceMetres,
  ];
  // A client's journey goes with others arriving meanwhile (one statement, one commit), locking the
  // policy's row in the order of policy ids.
  const outcome =
    'storeJourney' in on
      ? await on.storeJourney(values, journey.policyId)
      : (await sql<{ outcome: number }>`select store_journey(${sql.join(values)}) as outcome`.execute(on.trx))
          .rows[0]?.outcome;
  if (outcome === 2) return 'VERSIONS_CHANGED';
  if (outcome !== 0) return 'TAKEN';
  // Every value stored came from here, so the row is not read back (it carries the whole route).
  return { ...journey, isVoid: false, voidedAt: null, voidReason: null, statementVersionId: null };
}

/** A non-void journey of the policy that overlaps [startAt, endAt), if any (the latest such). */
export async function findOverlappingJourney(
  db: Executor,
  tenant: Tenant,
  policyId: string,
  span: { startAt: Date; endAt: Date },
): Promise<JourneyRecord | undefined> {
  const row = await db
    .selectFrom('journeys')
    .select(columns)
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .where('is_void', '=', false)
    .where('start_at', '<', span.endAt)
    .where('end_at', '>', span.startAt)
    .orderBy('start_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : toJourney(row);
}

export async function findJourneyByProviderReference(
  db: Executor,
  tenant: Tenant,
  policyId: string,
  providerReference: string,
): Promise<JourneyRecord | undefined> {
  const row = await db
    .selectFrom('journeys')
    .select(columns)
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .where('provider_reference', '=', providerReference)
    // A re-cut trip's voided forerunners share its name (migration 0025): the live one answers.
    .orderBy('is_void')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : toJourney(row);
}

/** The tenant's journey `id`; restricted to `policyIds` when given (a policyholder's own policies). */
export async function findJourney(
  db: Executor,
  tenant: Tenant,
  id: string,
  policyIds?: readonly string[],
): Promise<JourneyRecord | undefined> {
  if (policyIds?.length === 0) return undefined;
  let query = db.selectFrom('journeys').select(columns).where(forTenant(tenant)).where('id', '=', id);
  if (policyIds !== undefined) query = query.where('policy_id', 'in', policyIds);
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toJourney(row);
}

export interface JourneyPage {
  readonly policyIds: readonly string[];
  /** Inclusive bounds on the start. */
  readonly fromAt?: Date | undefined;
  readonly toAt?: Date | undefined;
  /** Continue after this (start, id). */
  readonly after?: { readonly startAt: Date; readonly id: string } | undefined;
  readonly limit: number;
}

/** The policies' journeys (void ones too) ordered by start, then id, one page at a time. */
export async function listJourneys(
  db: Executor,
  tenant: Tenant,
  page: JourneyPage,
): Promise<JourneyRecord[]> {
  if (page.policyIds.length === 0) return [];
  let query = db
    .selectFrom('journeys')
    .select(columns)
    .where(forTenant(tenant))
    .where('policy_id', 'in', page.policyIds)
    .orderBy('start_at')
    .orderBy('id')
    .limit(page.limit);
  if (page.fromAt !== undefined) query = query.where('start_at', '>=', page.fromAt);
  if (page.toAt !== undefined) query = query.where('start_at', '<=', page.toAt);
  const after = page.after;
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('start_at', '>', after.startAt),
        eb.and([eb('start_at', '=', after.startAt), eb('id', '>', after.id)]),
      ]),
    );
  }
  return (await query.execute()).map(toJourney);
}

/**
 * Marks a journey void unless it already is; undefined when it was (or is not the tenant's). First it
 * takes its policy's key-share lock, which a statement being written holds against it, so the UPDATE
 * (a later snapshot) sees every statement that bills the journey; the one that had is fixed on the row,
 * where the next statement finds the credit owed and a written statement keeps listing it.
 */
export async function markJourneyVoid(
  trx: Executor,
  tenant: Tenant,
  id: string,
  values: { reason: string; at: Date },
): Promise<JourneyRecord | undefined> {
  await sql`
    select 1 from policies
    where id = (select policy_id from journeys
      where id = ${id} and ${forTenant(tenant)})
    for key share`.execute(trx);
  const row = await trx
    .updateTable('journeys')
    .set({
      is_void: true,
      voided_at: values.at,
      void_reason: values.reason,
      statement_version_id: billedByStatement,
    })
    .where(forTenant(tenant))
    .where('id', '=', id)
    .where('is_void', '=', false)
    .returning(columns)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  // A void journey no longer stands in another's way; a device trip's or an estimate's reference is
  // freed for the trip re-cut in its place (migration 0025), a client's stays taken.
  await trx
    .updateTable('journey_keys')
    .set({ live: false, ...(row.source === 'api' ? {} : { provider_reference: null }) })
    .where('policy_id', '=', row.policy_id)
    .where('journey_id', '=', row.id)
    .execute();
  return toJourney(row);
}

/** The audit record of a void, with whether the journey had been billed (then a credit is owed). */
export async function insertJourneyVoid(
  trx: Executor,
  tenant: Tenant,
  journey: JourneyRecord,
  values: { reason: string; requestId: string | null; at: Date },
): Promise<void> {
  await trx
    .insertInto('journey_voids')
    .values({
      journey_id: journey.id,
      policy_id: journey.policyId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      reason: values.reason,
      billed_statement_version_id: journey.statementVersionId,
      credited_statement_version_id: null,
      usage_premium_pence: journey.usagePremiumPence,
      request_id: values.requestId,
      created_at: values.at,
    })
    .execute();
}

/** A device's trip journeys (not void) from `from` on: those starting then or later, or ending after. */
export async function listDeviceTripsFrom(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  from: Date,
): Promise<Array<{ id: string; policyId: string; startAt: Date; endAt: Date; route: string }>> {
  const rows = await db
    .selectFrom('journeys')
    .select(['id', 'policy_id', 'start_at', 'end_at', 'route'])
    .where(forTenant(tenant))
    .where('device_id', '=', deviceId)
    .where('source', '=', 'device')
    .where('is_void', '=', false)
    .where('end_at', '>=', from)
    .orderBy('start_at')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    policyId: r.policy_id,
    startAt: r.start_at,
    endAt: r.end_at,
    route: r.route,
  }));
}

/** A device's estimates (not void) of silent London days, by the names they were given. */
export async function listDeviceEstimatesNamed(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  providerReferences: readonly string[],
): Promise<Array<{ id: string; policyId: string }>> {
  if (providerReferences.length === 0) return [];
  const rows = await db
    .selectFrom('journeys')
    .select(['id', 'policy_id'])
    .where(forTenant(tenant))
    .where('device_id', '=', deviceId)
    .where('source', '=', 'estimate')
    .where('is_void', '=', false)
    .where('provider_reference', 'in', providerReferences)
    .execute();
  return rows.map((r) => ({ id: r.id, policyId: r.policy_id }));
}
