import { sql, type Kysely } from 'kysely';

/**
 * Telematics (issue 18): devices, their bindings to policies over time, and raw positions.
 *
 * - A device is a company's and environment's (`device_id` is the client's name for it). Its bindings
 *   keep the history: at most one open binding per device and one per policy, held by two partial unique
 *   indexes, so a race between two bindings ends in a unique violation, never two active devices.
 * - Positions are partitioned by month of `time` (UTC): retention drops whole partitions instead of
 *   deleting billions of rows. The key (device, time) includes the partition key, as PostgreSQL requires,
 *   and makes a resent position a no-op. NOTE: no foreign keys from positions: a key check a row would
 *   cost ingestion a lookup per position, and devices are never deleted (unbinding keeps the row).
 * - The DEFAULT partition takes any time that no monthly partition covers yet (a position far in the
 *   past, or a month the worker has not created because it was down), so an insert never fails for a
 *   missing partition. The worker's maintenance moves such rows into their month when it creates it.
 * - Partitions for the months around today are created here; the worker keeps creating them ahead
 *   (telematics/position-partitions.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table devices (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      device_id text not null,
      kind text not null,
      vin text,
      last_seen_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint devices_device_id_key unique (company_id, environment, device_id),
      constraint devices_kind check (kind in ('obd', 'connected_car', 'phone'))
    )`.execute(db);
  await sql`
    create table device_bindings (
      id uuid primary key default gen_random_uuid(),
      device_id uuid not null references devices (id),
      policy_id uuid not null references policies (id),
      policy_reference text not null,
      bound_at timestamptz not null,
      unbound_at timestamptz,
      constraint device_bindings_period check (unbound_at is null or unbound_at >= bound_at)
    )`.execute(db);
  await sql`create index device_bindings_device on device_bindings (device_id, bound_at)`.execute(db);
  await sql`create index device_bindings_policy on device_bindings (policy_id, bound_at)`.execute(db);
  await sql`
    create unique index device_bindings_one_open_per_device on device_bindings (device_id)
      where unbound_at is null`.execute(db);
  await sql`
    create unique index device_bindings_one_open_per_policy on device_bindings (policy_id)
      where unbound_at is null`.execute(db);
  await sql`
    create table positions (
      device_id uuid not null,
      time timestamptz not null,
      policy_id uuid not null,
      lat double precision not null,
      lon double precision not null,
      speed_kmh real,
      heading real,
      accuracy_m real,
      ignition boolean,
      odometer_metres bigint,
      received_at timestamptz not null,
      constraint positions_pkey primary key (device_id, time)
    ) partition by range (time)`.execute(db);
  await sql`create table positions_default partition of positions default`.execute(db);
  // The previous month to three ahead, by the database's clock (the worker maintains them from then on).
  await sql`
    do $$
    declare
      month date;
    begin
      for i in -1..3 loop
        month := (date_trunc('month', now() at time zone 'UTC') + make_interval(months => i))::date;
        execute format(
          'create table if not exists %I partition of positions for values from (%L) to (%L)',
          'positions_p' || to_char(month, 'YYYY_MM'),
          to_char(month, 'YYYY-MM-DD') || 'T00:00:00Z',
          to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || 'T00:00:00Z');
      end loop;
    end $$`.execute(db);
}
