import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Claims: crash events from devices (or detected from positions), the first notice of loss they owe,
 * and the claim's life (states, exposures with reserves and payments, notes, photos).
 *
 * - `crash_events` (telematics): one row a crash. `crash_events_one_a_window` (a trigger) keeps one crash
 *   a device in any 2 minutes: it locks the device row (`for no key update`, so two reports of one crash
 *   take turns) and skips the insert when a crash of the device lies within 2 minutes either side. The
 *   caller sees no row returned and reads the crash already stored.
 * - `claim_crashes_owed` (claims): a trigger on `crash_events` records, in the crash's transaction, the
 *   first notice of loss each crash owes; the worker opens the draft claim and deletes the row. A crash
 *   that commits owes its claim, one that rolls back owes none, and telematics does not call claims.
 * - `claims`: `claims_one_per_crash` keeps one claim a crash however many workers take the row.
 * - The state table is written into `claims_state_change` (a trigger), which refuses an update of a
 *   claim's state that is not one of its rows, and an insert in any state but draft or open.
 * - `claim_exposures.paid_pence`: moved only by the trigger on `claim_payments`; the check
 *   `claim_exposures_paid_within_reserve` refuses a payment above the reserve (raise it first) and a
 *   reserve lowered below what was paid. A final payment settles the exposure: no payment after it.
 * - `staff.role` gains `claims` (the claims handlers).
 */

const STATES = ['draft', 'open', 'settled', 'closed', 'rejected', 'withdrawn', 'reopened'];

/** The claim's state table (docs/api.md, "Claims"). */
const TRANSITIONS: ReadonlyArray<readonly [string, string]> = [
  ['draft', 'open'],
  ['draft', 'withdrawn'],
  ['draft', 'rejected'],
  ['open', 'settled'],
  ['open', 'rejected'],
  ['open', 'withdrawn'],
  ['reopened', 'settled'],
  ['reopened', 'rejected'],
  ['reopened', 'withdrawn'],
  ['settled', 'closed'],
  ['settled', 'reopened'],
  ['closed', 'reopened'],
  ['rejected', 'reopened'],
  ['withdrawn', 'reopened'],
];

const EXPOSURE_KINDS = ['own_vehicle', 'other_vehicle', 'injury', 'windscreen', 'theft'];
const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/heic', 'image/webp'];
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

const list = (values: readonly string[]) => sql.join(values.map((v) => sql.lit(v)));

async function crashEvents(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table crash_events (
      id uuid not null default gen_random_uuid() constraint crash_events_pkey primary key,
      company_id uuid not null,
      environment text not null,
      device_id uuid not null constraint crash_events_device_fkey references devices (id),
      policy_id uuid not null,
      policy_reference text not null,
      source text not null constraint crash_events_source_known check (source in ('device', 'detected')),
      occurred_at timestamptz not null,
      lat double precision not null constraint crash_events_lat_range check (lat between -90 and 90),
      lon double precision not null constraint crash_events_lon_range check (lon between -180 and 180),
      speed_kmh numeric(6, 2) not null constraint crash_events_speed_range check (speed_kmh >= 0),
      peak_acceleration_g numeric(6, 2) constraint crash_events_g_range check (peak_acceleration_g >= 0),
      delta_v_kmh numeric(6, 2) constraint crash_events_delta_v_range check (delta_v_kmh >= 0),
      airbag_deployed boolean,
      received_at timestamptz not null,
      constraint crash_events_device_reports_force check (source = 'detected' or peak_acceleration_g is not null)
    )`.execute(db);
  await sql`create index crash_events_device_time on crash_events (device_id, occurred_at)`.execute(db);
  await sql`create index crash_events_policy on crash_events (policy_id, occurred_at)`.execute(db);
  await sql`
    create function crash_events_once() returns trigger language plpgsql as $$
    begin
      -- Two reports of one crash take turns on the device row; the second sees the first's row.
      perform 1 from devices where id = new.device_id for no key update;
      if exists (
          select 1 from crash_events
          where device_id = new.device_id
            and occurred_at > new.occurred_at - interval '2 minutes'
            and occurred_at < new.occurred_at + interval '2 minutes') then
        return null;
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger crash_events_one_a_window before insert on crash_events
    for each row execute function crash_events_once()`.execute(db);
}

async function owedClaims(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table claim_crashes_owed (
      crash_event_id uuid not null constraint claim_crashes_owed_pkey primary key,
      company_id uuid not null,
      environment text not null,
      policy_id uuid not null,
      due_at timestamptz not null,
      attempts integer not null default 0,
      leased_until timestamptz,
      last_error text,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index claim_crashes_owed_due on claim_crashes_owed (due_at)`.execute(db);
  await sql`
    create function claims_owe_first_notice() returns trigger language plpgsql as $$
    begin
      insert into claim_crashes_owed (crash_event_id, company_id, environment, policy_id, due_at, created_at)
      values (new.id, new.company_id, new.environment, new.policy_id, new.received_at, new.received_at);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger crash_events_owe_claim after insert on crash_events
    for each row execute function claims_owe_first_notice()`.execute(db);
}

async function claims(db: Kysely<unknown>): Promise<void> {
  const transitions = sql.join(TRANSITIONS.map(([from, to]) => sql`(${sql.lit(from)}, ${sql.lit(to)})`));
  await sql`
    create table claims (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null constraint claims_policy_fkey references policies (id),
      company_id uuid not null,
      environment text not null,
      state text not null constraint claims_state_known check (state in (${list(STATES)})),
      source text not null constraint claims_source_known check (source in ('crash', 'reported')),
      crash_event_id uuid,
      policy_version_id uuid,
      occurred_at timestamptz not null,
      lat double precision,
      lon double precision,
      place_name text,
      postcode text,
      speed_kmh numeric(6, 2),
      crash_file jsonb,
      cover jsonb,
      description text,
      other_parties text,
      injuries boolean,
      other_vehicles boolean,
      police_attended boolean,
      handler_staff_id uuid,
      respond_by timestamptz,
      referred_at timestamptz,
      legal_hold_reason text,
      legal_hold_at timestamptz,
      erased_at timestamptz,
      opened_at timestamptz,
      closed_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint claims_pkey primary key (id, policy_id),
      constraint claims_one_per_crash unique (crash_event_id, policy_id),
      constraint claims_crash_source check ((source = 'crash') = (crash_event_id is not null)),
      constraint claims_version_fkey foreign key (policy_version_id, policy_id)
        references policy_versions (id, policy_id)
    )`.execute(db);
  await sql`create index claims_by_policy on claims (policy_id, created_at)`.execute(db);
  await sql`create index claims_by_tenant on claims (company_id, environment, state, created_at)`.execute(db);
  await sql`
    create function claims_state_change() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'INSERT' then
        if new.state not in ('draft', 'open') then
          raise exception 'a claim starts as draft or open, not %', new.state using errcode = 'check_violation';
        end if;
      elsif new.state is distinct from old.state and not exists (
          select 1 from (values ${transitions}) as t (from_state, to_state)
          where from_state = old.state and to_state = new.state) then
        raise exception 'a claim may not go from % to %', old.state, new.state using errcode = 'check_violation';
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger claims_state_table before insert or update of state on claims
    for each row execute function claims_state_change()`.execute(db);
}

async function exposures(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table claim_exposures (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      claim_id uuid not null,
      company_id uuid not null,
      environment text not null,
      kind text not null constraint claim_exposures_kind_known check (kind in (${list(EXPOSURE_KINDS)})),
      reserve_pence bigint not null constraint claim_exposures_reserve_range check (reserve_pence >= 0),
      paid_pence bigint not null default 0,
      settled_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint claim_exposures_pkey primary key (id, policy_id),
      constraint claim_exposures_claim_fkey foreign key (claim_id, policy_id) references claims (id, policy_id),
      constraint claim_exposures_paid_within_reserve check (paid_pence between 0 and reserve_pence)
    )`.execute(db);
  await sql`create index claim_exposures_by_claim on claim_exposures (policy_id, claim_id)`.execute(db);
  await sql`
    create table claim_payments (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      claim_id uuid not null,
      exposure_id uuid not null,
      company_id uuid not null,
      environment text not null,
      amount_pence bigint not null constraint claim_payments_amount_positive check (amount_pence > 0),
      final boolean not null,
      payee text not null,
      paid_at timestamptz not null,
      constraint claim_payments_pkey primary key (id, policy_id),
      constraint claim_payments_exposure_fkey foreign key (exposure_id, policy_id)
        references claim_exposures (id, policy_id)
    )`.execute(db);
  await sql`create index claim_payments_by_claim on claim_payments (policy_id, claim_id, paid_at)`.execute(
    db,
  );
  await sql`
    create function claim_payments_apply() returns trigger language plpgsql as $$
    begin
      update claim_exposures set paid_pence = paid_pence + new.amount_pence,
        settled_at = case when new.final then new.paid_at else null end, updated_at = new.paid_at
      where id = new.exposure_id and policy_id = new.policy_id and settled_at is null;
      if not found then
        raise exception 'exposure % is settled: no payment after its final one', new.exposure_id
          using errcode = 'check_violation';
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger claim_payments_paid after insert on claim_payments
    for each row execute function claim_payments_apply()`.execute(db);
  await sql`
    create function claim_payments_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'claim payments are never rewritten' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`
    create trigger claim_payments_no_update before update on claim_payments
    for each row execute function claim_payments_immutable()`.execute(db);
}

async function notesAndPhotos(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table claim_notes (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      claim_id uuid not null,
      company_id uuid not null,
      environment text not null,
      author text not null,
      staff_id uuid,
      body text not null,
      created_at timestamptz not null,
      constraint claim_notes_pkey primary key (id, policy_id),
      constraint claim_notes_claim_fkey foreign key (claim_id, policy_id) references claims (id, policy_id)
    )`.execute(db);
  await sql`create index claim_notes_by_claim on claim_notes (policy_id, claim_id, created_at)`.execute(db);
  await sql`
    create table claim_photos (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      claim_id uuid not null,
      company_id uuid not null,
      environment text not null,
      content_type text not null constraint claim_photos_type_known check (content_type in (${list(PHOTO_TYPES)})),
      size_bytes integer not null
        constraint claim_photos_size_range check (size_bytes between 1 and ${sql.lit(MAX_PHOTO_BYTES)}),
      sha256 text not null constraint claim_photos_sha256_hex check (sha256 ~ '^[0-9a-f]{64}$'),
      content bytea not null,
      uploaded_at timestamptz not null,
      constraint claim_photos_pkey primary key (id, policy_id),
      constraint claim_photos_claim_fkey foreign key (claim_id, policy_id) references claims (id, policy_id)
    )`.execute(db);
  await sql`create index claim_photos_by_claim on claim_photos (policy_id, claim_id, uploaded_at)`.execute(
    db,
  );
  await sql`
    create table claim_settings (
      company_id uuid not null,
      environment text not null,
      response_hours integer not null constraint claim_settings_response_range check (response_hours between 1 and 720),
      updated_at timestamptz not null,
      constraint claim_settings_pkey primary key (company_id, environment)
    )`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  // NOTE: no table holds rows of its own here: an empty database is built from the schema snapshot,
  // which carries no data, so the state table is written into the trigger's function.
  await crashEvents(db);
  await owedClaims(db);
  await claims(db);
  await exposures(db);
  await notesAndPhotos(db);
  // Photos are not audited: the trail would copy their bytes; their upload is the claim's (claim_id).
  for (const table of ['claims', 'claim_exposures', 'claim_payments', 'claim_notes', 'claim_settings'])
    await auditTable(db, table);
  await sql`alter table staff drop constraint if exists staff_role_check`.execute(db);
  await sql`
    alter table staff add constraint staff_role_check
    check (role in ('admin', 'operations', 'viewer', 'claims'))`.execute(db);
}
