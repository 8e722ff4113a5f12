import type { Executor } from '../../schema.ts';
import { EXPORT_BATCH_ROWS, none, type After } from './subject-access-repository.ts';

/* The reads of a subject access export about driving: journeys and their voids and credits, devices
 * and their bindings, raw positions and odometer readings (see subject-access-repository.ts). */

/** Journeys of one policy by start, with their encoded routes. */
export async function pageJourneys(
  db: Executor,
  policyId: string,
  after: After<{ start_at: Date; journey_reference: string }>,
) {
  let q = db
    .selectFrom('journeys')
    .select([
      'id as journey_reference',
      'policy_reference',
      'policy_version_id as policy_version_reference',
      'provider_reference',
      'source',
      'device_id',
      'start_at',
      'end_at',
      'distance_metres',
      'gap_distance_metres',
      'distance_unit',
      'usage_rate',
      'usage_premium_pence',
      'start_lat',
      'start_lng',
      'start_name',
      'start_postcode',
      'end_lat',
      'end_lng',
      'end_name',
      'end_postcode',
      'is_void',
      'voided_at',
      'void_reason',
      'late',
      'statement_version_id as billed_by_policy_version_reference',
      'point_count',
      'route_precision',
      'route',
      'created_at',
    ])
    .where('policy_id', '=', policyId);
  if (after !== undefined)
    q = q.where((eb) =>
      eb(eb.refTuple('start_at', 'id'), '>', eb.tuple(after.start_at, after.journey_reference)),
    );
  return q.orderBy('start_at').orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageJourneyVoids(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('journey_voids')
    .select([
      'id',
      'journey_id as journey_reference',
      'reason',
      'usage_premium_pence',
      'billed_statement_version_id as billed_by_policy_version_reference',
      'credited_statement_version_id as credited_by_policy_version_reference',
      'request_id',
      'created_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageJourneyRuleCredits(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('journey_rule_credits')
    .select([
      'id',
      'journey_id as journey_reference',
      'statement_id as policy_version_reference',
      'rule',
      'day',
      'distance_metres',
      'credit_pence',
      'created_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** Every device ever bound to one of the policies, with those bindings (not other people's). */
export async function listDevices(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  const bindings = await db
    .selectFrom('device_bindings as b')
    .innerJoin('devices as d', 'd.id', 'b.device_id')
    .select([
      'b.id',
      'b.device_id as device_key',
      'd.device_id',
      'b.policy_id',
      'b.policy_reference',
      'b.bound_at',
      'b.unbound_at',
    ])
    .where('b.policy_id', 'in', policyIds)
    .orderBy('b.bound_at')
    .orderBy('b.id')
    .execute();
  const keys = [...new Set(bindings.map((b) => b.device_key))];
  if (keys.length === 0) return [];
  const devices = await db
    .selectFrom('devices')
    .select(['id', 'device_id', 'kind', 'vin', 'last_seen_at', 'offline_since', 'created_at', 'updated_at'])
    .where('id', 'in', keys)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return devices.map(({ id, ...device }) => ({
    key: id,
    record: {
      ...device,
      bindings: bindings
        .filter((b) => b.device_key === id)
        .map((b) => ({
          id: b.id,
          policy_reference: b.policy_reference,
          bound_at: b.bound_at,
          unbound_at: b.unbound_at,
        })),
    },
  }));
}

/**
 * Positions of one device that belong to the subject's policies, by time: the key (device, time)
 * is the table's primary key, so each page is an index range scan however many positions there are.
 */
export async function pagePositions(
  db: Executor,
  deviceKey: string,
  policyIds: readonly string[],
  after: After<{ time: Date }>,
) {
  let q = db
    .selectFrom('positions')
    .select([
      'time',
      'policy_id',
      'lat',
      'lon',
      'speed_kmh',
      'heading',
      'accuracy_m',
      'ignition',
      'odometer_metres',
      'received_at',
      'attributes',
    ])
    .where('device_id', '=', deviceKey)
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('time', '>', after.time);
  return q.orderBy('time').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageOdometerReadings(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('odometer_readings')
    .select(['id', 'policy_id', 'device_id', 'reading_metres', 'time', 'source', 'created_at'])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}
