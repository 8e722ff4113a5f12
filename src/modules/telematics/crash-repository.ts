/** Crash events: one a device in any 2 minutes (the database's trigger), read by the claims' first notice of loss. */
import type { Generated } from 'kysely';
import type { Executor } from '../../schema.ts';

export interface CrashTables {
  /** Crashes reported by devices or detected in positions (migration 0049). */
  crash_events: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    device_id: string;
    policy_id: string;
    policy_reference: string;
    source: 'device' | 'detected';
    occurred_at: Date;
    lat: number;
    lon: number;
    speed_kmh: string;
    peak_acceleration_g: string | null;
    delta_v_kmh: string | null;
    airbag_deployed: boolean | null;
    received_at: Date;
  };
}

/** A crash to store: its numbers as decimal text, exactly as measured. */
export interface NewCrash {
  readonly companyId: string;
  readonly environment: string;
  readonly deviceRowId: string;
  readonly policyId: string;
  readonly policyReference: string;
  readonly source: 'device' | 'detected';
  readonly occurredAt: Date;
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh: number;
  readonly peakAccelerationG: number | null;
  readonly deltaVKmh: number | null;
  readonly airbagDeployed: boolean | null;
  readonly receivedAt: Date;
}

/** A stored crash, with its device's own id and its tenant. */
export interface CrashRecord {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly deviceRowId: string;
  readonly deviceId: string;
  readonly policyId: string;
  readonly policyReference: string;
  readonly source: 'device' | 'detected';
  readonly occurredAt: Date;
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh: number;
  readonly peakAccelerationG: number | null;
  readonly deltaVKmh: number | null;
  readonly airbagDeployed: boolean | null;
  readonly receivedAt: Date;
}

const decimalText = (value: number | null): string | null => (value === null ? null : String(value));
const decimalOf = (text: string | null): number | null => (text === null ? null : Number(text));

/**
 * Stores a crash unless the device has one within 2 minutes of it (the trigger `crash_events_one_a_window`
 * skips the row); its id, or undefined when it was such a duplicate. The first notice of loss it owes is
 * recorded by a trigger in the same transaction.
 */
export async function insertCrash(db: Executor, crash: NewCrash): Promise<string | undefined> {
  const row = await db
    .insertInto('crash_events')
    .values({
      company_id: crash.companyId,
      environment: crash.environment,
      device_id: crash.deviceRowId,
      policy_id: crash.policyId,
      policy_reference: crash.policyReference,
      source: crash.source,
      occurred_at: crash.occurredAt,
      lat: crash.lat,
      lon: crash.lon,
      speed_kmh: String(crash.speedKmh),
      peak_acceleration_g: decimalText(crash.peakAccelerationG),
      delta_v_kmh: decimalText(crash.deltaVKmh),
      airbag_deployed: crash.airbagDeployed,
      received_at: crash.receivedAt,
    })
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

const crashColumns = [
  'crash_events.id',
  'crash_events.company_id',
  'crash_events.environment',
  'crash_events.device_id as device_row_id',
  'devices.device_id',
  'crash_events.policy_id',
  'crash_events.policy_reference',
  'crash_events.source',
  'crash_events.occurred_at',
  'crash_events.lat',
  'crash_events.lon',
  'crash_events.speed_kmh',
  'crash_events.peak_acceleration_g',
  'crash_events.delta_v_kmh',
  'crash_events.airbag_deployed',
  'crash_events.received_at',
] as const;

const crashQuery = (db: Executor) =>
  db
    .selectFrom('crash_events')
    .innerJoin('devices', 'devices.id', 'crash_events.device_id')
    .select(crashColumns);

type CrashRow = Awaited<ReturnType<ReturnType<typeof crashQuery>['executeTakeFirstOrThrow']>>;

function toCrash(row: CrashRow): CrashRecord {
  return {
    id: row.id,
    companyId: row.company_id,
    environment: row.environment,
    deviceRowId: row.device_row_id,
    deviceId: row.device_id,
    policyId: row.policy_id,
    policyReference: row.policy_reference,
    source: row.source,
    occurredAt: row.occurred_at,
    lat: row.lat,
    lon: row.lon,
    speedKmh: Number(row.speed_kmh),
    peakAccelerationG: decimalOf(row.peak_acceleration_g),
    deltaVKmh: decimalOf(row.delta_v_kmh),
    airbagDeployed: row.airbag_deployed,
    receivedAt: row.received_at,
  };
}

/** The device's stored crash within 2 minutes of `at` (the one a duplicate report stands for), nearest first. */
export async function findCrashNear(
  db: Executor,
  deviceRowId: string,
  at: Date,
): Promise<CrashRecord | undefined> {
  const windowMs = 2 * 60_000;
  const rows = await crashQuery(db)
    .where('crash_events.device_id', '=', deviceRowId)
    .where('crash_events.occurred_at', '>', new Date(at.getTime() - windowMs))
    .where('crash_events.occurred_at', '<', new Date(at.getTime() + windowMs))
    .execute();
  return rows
    .map(toCrash)
    .toSorted(
      (a, b) =>
        Math.abs(a.occurredAt.getTime() - at.getTime()) - Math.abs(b.occurredAt.getTime() - at.getTime()),
    )[0];
}

/** A crash by its id, whichever tenant's (a worker's job names it); undefined when there is none. */
export async function findCrash(db: Executor, crashId: string): Promise<CrashRecord | undefined> {
  const row = await crashQuery(db).where('crash_events.id', '=', crashId).executeTakeFirst();
  return row === undefined ? undefined : toCrash(row);
}

/** Every crash of the policies (subject access), oldest first. */
export async function listCrashesOfPolicies(
  db: Executor,
  policyIds: readonly string[],
): Promise<CrashRecord[]> {
  if (policyIds.length === 0) return [];
  const rows = await crashQuery(db)
    .where('crash_events.policy_id', 'in', policyIds)
    .orderBy('crash_events.occurred_at')
    .orderBy('crash_events.id')
    .execute();
  return rows.map(toCrash);
}

/** Erasure: the policies' crashes deleted, but those in `keep` (a claim under a legal hold holds them); how many went. */
export async function deleteCrashes(
  db: Executor,
  policyIds: readonly string[],
  keep: readonly string[],
): Promise<number> {
  if (policyIds.length === 0) return 0;
  let query = db.deleteFrom('crash_events').where('policy_id', 'in', policyIds);
  if (keep.length > 0) query = query.where('id', 'not in', keep);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The crashes of these ids deleted (an ended claim's crash past its retention); how many went. */
export async function deleteCrashesById(db: Executor, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('crash_events').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
