/** Trip cutting's leases on devices: which pass cuts a device's trips, and what it has still to read. */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';

/** A device with positions not yet cut into trips, or a trip in progress that may have ended. */
export interface PendingDevice {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly deviceId: string;
  /** The earliest time among positions stored since the last cut. */
  readonly pendingFrom: Date | null;
  /** Batches stored so far: the cut is done only if none came while it ran. */
  readonly positionBatches: number;
  readonly openTripFrom: Date | null;
}

/**
 * Leases up to `limit` devices whose trips need cutting to the pass `leaseId` until `leaseUntil`, so that
 * one worker cuts a device at a time (the pass renews its lease while it works; one a killed worker held
 * runs out at its `leaseUntil`): those with new positions, unless they were cut too recently and are
 * still reporting; and those with a trip in progress whose device has been still for `idleS`.
 *
 * Too recently: less than `recutS` ago; or, with a trip in progress, less than `recutShare` of its length
 * so far (at most `idleS`) unless its latest position has the ignition off. Each cut rereads the trip in
 * progress from its start, so a device streaming while it drives would otherwise be reread at every
 * batch, and at a fixed interval the rows read over a drive grow with its square: at a share of its
 * length, a tenth of them over a two-hour drive at 1 Hz. A trip whose end shows in the positions is
 * cut within `recutS` when the device's latest position has the ignition off (one probe of the
 * positions' key for each device not yet due); otherwise (still reporting with the ignition on or not
 * reported: parked, or driving again after a short stop) within `idleS`.
 */
export async function leasePendingDevices(
  db: Executor,
  now: Date,
  options: {
    idleS: number;
    recutS: number;
    recutShare: number;
    leaseId: string;
    leaseUntil: Date;
    limit: number;
  },
): Promise<PendingDevice[]> {
  const idleBefore = new Date(now.getTime() - options.idleS * 1000);
  const cutBefore = new Date(now.getTime() - options.recutS * 1000);
  // The trip in progress's share, in seconds (see above).
  const openTripShareS = sql`least(${options.idleS}::float8,
    extract(epoch from last_seen_at - open_trip_from)::float8 * ${options.recutShare}::float8)`;
  const result = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    trips_pending_from: Date | null;
    position_batches: number;
    open_trip_from: Date | null;
  }>`
    update devices set trips_lease_until = ${options.leaseUntil}, trips_lease_id = ${options.leaseId}
    where id in (
      select id from devices
      where ((trips_pending_from is not null
            and (trips_cut_at is null or last_seen_at <= ${idleBefore}
              or (trips_cut_at <= ${cutBefore}
                and (open_trip_from is null
                  or trips_cut_at <= ${now}::timestamptz - ${openTripShareS} * interval '1 second'
                  -- The latest position (last_seen_at is its time): one probe of the key. A scalar
                  -- subquery, not exists(), which PostgreSQL may plan as a hash of every such position.
                  or (select p.ignition from positions p
                    where p.device_id = devices.id and p.time = devices.last_seen_at) is false))))
          or (open_trip_from is not null and (last_seen_at is null or last_seen_at <= ${idleBefore})))
        and (trips_lease_until is null or trips_lease_until < ${now})
      order by trips_pending_from nulls last
      limit ${options.limit}
      for update skip locked)
    returning id, company_id, environment, device_id, trips_pending_from, position_batches, open_trip_from`.execute(
    db,
  );
  return result.rows.map((r) => ({
    id: r.id,
    companyId: r.company_id,
    environment: r.environment,
    deviceId: r.device_id,
    pendingFrom: r.trips_pending_from,
    positionBatches: r.position_batches,
    openTripFrom: r.open_trip_from,
  }));
}

/**
 * The heartbeat of the pass `leaseId`: moves the end of its leases on `deviceRowIds` to `leaseUntil`.
 * Returns the devices it still holds (a lease that lapsed and was taken by another pass is not renewed).
 */
export async function renewTripLeases(
  db: Executor,
  leaseId: string,
  deviceRowIds: readonly string[],
  leaseUntil: Date,
): Promise<Set<string>> {
  if (deviceRowIds.length === 0) return new Set();
  const rows = await db
    .updateTable('devices')
    .set({ trips_lease_until: leaseUntil })
    .where('id', 'in', [...deviceRowIds])
    .where('trips_lease_id', '=', leaseId)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends the pass's lease on a device after a cut: its pending positions are done unless more batches
 * came meanwhile (then they wait for the next pass, from the same time or earlier). Nothing changes when
 * the lease is no longer the pass's (it lapsed and another pass took the device: that one decides).
 */
export async function finishTripCut(
  db: Executor,
  device: PendingDevice,
  leaseId: string,
  openTripFrom: Date | null,
  at: Date,
): Promise<void> {
  await sql`
    update devices set
      trips_cut_at = ${at},
      trips_pending_from = case when position_batches = ${device.positionBatches} then null
        else trips_pending_from end,
      open_trip_from = ${openTripFrom},
      trips_lease_until = null,
      trips_lease_id = null
    where id = ${device.id} and trips_lease_id = ${leaseId}`.execute(db);
}

/** Gives the pass's leases back (a failed cut, a pass stopped early), so the next pass tries them again. */
export async function releaseTripLeases(
  db: Executor,
  leaseId: string,
  deviceRowIds: readonly string[],
): Promise<void> {
  if (deviceRowIds.length === 0) return;
  await db
    .updateTable('devices')
    .set({ trips_lease_until: null, trips_lease_id: null })
    .where('id', 'in', [...deviceRowIds])
    .where('trips_lease_id', '=', leaseId)
    .execute();
}
