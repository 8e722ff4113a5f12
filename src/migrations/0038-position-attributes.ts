import { sql, type Kysely } from 'kysely';

/**
 * A position's other attributes, and trip-cutting leases that name their holder.
 *
 * - `positions.attributes`: what a tracker sends beyond the fields Milepost reads (altitude,
 *   satellites, battery, …), bounded by the service (telematics/rules/position-attributes.ts), null when
 *   there is none. Added to the partitioned parent, so every month and the DEFAULT partition have it,
 *   and the months the worker creates later (LIKE the parent) too. A nullable column without a default
 *   is a catalogue change only: no partition is rewritten. It is no key, so the table stays sharded by
 *   device on Citus as before.
 * - `devices.trips_lease_id`: the pass that holds a device's trip-cutting lease. The lease is short and
 *   renewed by its holder's heartbeat while it works, so a killed worker's devices are taken up soon;
 *   renewing, finishing and giving back act only on the holder's own lease, never on one another worker
 *   took after it lapsed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table positions add column attributes jsonb`.execute(db);
  await sql`alter table devices add column trips_lease_id uuid`.execute(db);
}
