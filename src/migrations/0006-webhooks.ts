import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Where "endpoint disabled" emails go; optional, set by the admin API.
  await sql`alter table companies add column contact_email text`.execute(db);

  await sql`
    create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      endpoint_reference text not null constraint webhook_endpoints_reference_key unique,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      url text not null,
      description text,
      event_types jsonb,
      enabled boolean not null default true,
      disabled_reason text check (disabled_reason in ('manual', 'failing')),
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`create index webhook_endpoints_tenant_idx on webhook_endpoints (company_id, environment, created_at)`.execute(
    db,
  );

  // Events still to be fanned out to endpoints. A trigger fills it in the transaction that writes the
  // event, so no module has to know about webhooks, and an event committed late (after one with a
  // higher sequence) is never skipped, as it could be by a cursor over events.sequence.
  await sql`
    create table webhook_pending_events (
      event_id uuid primary key references events (id) on delete cascade,
      position bigint generated always as identity
    )`.execute(db);
  await sql`create index webhook_pending_events_position_idx on webhook_pending_events (position)`.execute(
    db,
  );
  await sql`
    create function webhook_queue_event() returns trigger language plpgsql as $$
    begin
      -- Only tenants with an enabled endpoint pay for a row; test events go to one endpoint directly.
      if new.type <> 'webhook.test' and exists (
        select 1 from webhook_endpoints e
        where e.company_id = new.company_id and e.environment = new.environment and e.enabled
      ) then
        insert into webhook_pending_events (event_id) values (new.id);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger events_webhook_queue after insert on events
    for each row execute function webhook_queue_event()`.execute(db);

  await sql`
    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      delivery_reference text not null constraint webhook_deliveries_reference_key unique,
      sequence bigint generated always as identity,
      endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
      event_id uuid not null references events (id),
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempt_count integer not null default 0,
      next_attempt_at timestamptz,
      lease_id uuid,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint webhook_deliveries_event_endpoint_key unique (event_id, endpoint_id)
    )`.execute(db);
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, sequence)`.execute(
    db,
  );

  await sql`
    create table webhook_delivery_attempts (
      id bigint generated always as identity primary key,
      delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
      attempt_number integer not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      outcome text not null check (outcome in ('succeeded', 'failed')),
      response_status integer,
      response_body text,
      error text,
      constraint webhook_delivery_attempts_number_key unique (delivery_id, attempt_number)
    )`.execute(db);
}
