/** The silence of bound devices: which are silent or offline, and their status changes. */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';

/** A bound device of an active policy that is silent, or was found offline. */
export interface SilentCandidate {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly deviceId: string;
  readonly lastSeenAt: Date | null;
  readonly offlineSince: Date | null;
  readonly estimatedThrough: string | null;
  readonly boundAt: Date;
  readonly policyId: string;
  readonly policyReference: string;
  readonly productReference: string | null;
  readonly userId: string;
}

/**
 * Bound devices of active policies that have sent nothing since `silentBefore` (nor been bound since),
 * and those marked offline (which may have come back), after the device row id `after`. NOTE: a scan of
 * the open bindings, run once a minute by one worker at a time (a pg-boss queue of policy `stately`).
 */
export async function silentCandidates(
  db: Executor,
  silentBefore: Date,
  page: { after: string; limit: number },
): Promise<SilentCandidate[]> {
  const { after, limit } = page;
  const rows = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    last_seen_at: Date | null;
    offline_since: Date | null;
    estimated_through: string | null;
    bound_at: Date;
    policy_id: string;
    policy_reference: string;
    product_reference: string | null;
    user_id: string;
  }>`
    select d.id, d.company_id, d.environment, d.device_id, d.last_seen_at, d.offline_since,
      d.estimated_through, b.bound_at, p.id as policy_id, p.policy_reference, p.product_reference, p.user_id
    from device_bindings b
    join devices d on d.id = b.device_id
    join policies p on p.id = b.policy_id
    where b.unbound_at is null and p.status = 'active' and d.id > ${after}
      and (d.offline_since is not null or greatest(d.last_seen_at, b.bound_at) < ${silentBefore})
    order by d.id
    limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    companyId: r.company_id,
    environment: r.environment,
    deviceId: r.device_id,
    lastSeenAt: r.last_seen_at,
    offlineSince: r.offline_since,
    estimatedThrough: r.estimated_through,
    boundAt: r.bound_at,
    policyId: r.policy_id,
    policyReference: r.policy_reference,
    productReference: r.product_reference,
    userId: r.user_id,
  }));
}

/** Records a device's silence: since when it is offline (null: online), the last day estimated. */
export async function updateDeviceSilence(
  db: Executor,
  deviceRowId: string,
  values: { offlineSince?: Date | null; estimatedThrough?: string },
): Promise<void> {
  await db
    .updateTable('devices')
    .set({
      ...(values.offlineSince === undefined
        ? {}
        : values.offlineSince === null
          ? { offline_since: null, offline_after_seconds: null }
          : { offline_since: values.offlineSince }),
      ...(values.estimatedThrough === undefined ? {} : { estimated_through: values.estimatedThrough }),
    })
    .where('id', '=', deviceRowId)
    .execute();
}

/**
 * Marks a device offline from `at`, silent for at least `afterSeconds` (its rule then), unless it was
 * meanwhile: marked so already, or seen since the pass read it (`lastSeenAt`, as read). Returns whether
 * it did.
 */
export async function markDeviceOffline(
  db: Executor,
  deviceRowId: string,
  values: { at: Date; lastSeenAt: Date | null; afterSeconds: number },
): Promise<boolean> {
  const rows = await sql`
    update devices set offline_since = ${values.at}, offline_after_seconds = ${values.afterSeconds}
    where id = ${deviceRowId} and offline_since is null
      and last_seen_at is not distinct from ${values.lastSeenAt}::timestamptz
    returning id`.execute(db);
  return rows.rows.length > 0;
}

/** Marks an offline device online; false when it was not offline (another pass or a report did it). */
export async function markDeviceOnline(db: Executor, deviceRowId: string): Promise<boolean> {
  const row = await db
    .updateTable('devices')
    .set({ offline_since: null, offline_after_seconds: null })
    .where('id', '=', deviceRowId)
    .where('offline_since', 'is not', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A device that has just stored positions, with its open binding and that binding's policy, its row
 * locked until the caller's transaction ends; undefined when it has no open binding.
 */
export async function lockReportingDevice(
  db: Executor,
  deviceRowId: string,
): Promise<Omit<SilentCandidate, 'userId'> | undefined> {
  const result = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    last_seen_at: Date | null;
    offline_since: Date | null;
    estimated_through: string | null;
    bound_at: Date;
    policy_id: string;
    policy_reference: string;
    product_reference: string | null;
  }>`
    select d.id, d.company_id, d.environment, d.device_id, d.last_seen_at, d.offline_since,
      d.estimated_through, b.bound_at, p.id as policy_id, p.policy_reference, p.product_reference
    from devices d
    join device_bindings b on b.device_id = d.id and b.unbound_at is null
    join policies p on p.id = b.policy_id
    where d.id = ${deviceRowId}
    for update of d`.execute(db);
  const r = result.rows[0];
  return r === undefined
    ? undefined
    : {
        id: r.id,
        companyId: r.company_id,
        environment: r.environment,
        deviceId: r.device_id,
        lastSeenAt: r.last_seen_at,
        offlineSince: r.offline_since,
        estimatedThrough: r.estimated_through,
        boundAt: r.bound_at,
        policyId: r.policy_id,
        policyReference: r.policy_reference,
        productReference: r.product_reference,
      };
}
