import { sql, type Kysely } from 'kysely';

/**
 * Every audit record of an action on a policy names the policy, so that the policy's trail
 * (`GET /admin/audit?policy_reference=…`, the console's policy page) holds all of it.
 *
 * The audit trigger (migrations 0027 and 0033) took the policy only from a row's own `policy_id`:
 * the event an action wrote, the account a resent welcome email reset, the device a binding named,
 * the email queued and a webhook delivery of the policy's event were recorded without it. Now the
 * policy of a record is, in order:
 * - the row's own: `policies.id`, or the row's `policy_id`;
 * - the one the row names: an event's `data.policy_reference`; a webhook delivery's event's;
 * - else the one the request named (`policy_reference` in the actor context, from the route's path
 *   or body), for the rows that name none (the account, the device, an email).
 * A reference counts only if it is a policy of the row's company and environment (or of the
 * request's). A record with a policy and no company or environment of its own (a version or binding
 * written through an admin route, which has no tenant) takes the policy's.
 *
 * Existing records are back-filled the same way, as far as they tell: events by the reference their
 * recorded data names, deliveries by their event, the rest of an action that named a policy in its
 * path or body (`resource` = `policy_reference:…`; refusals stay the request's, as they changed
 * nothing of the policy). The append-only trigger is off for that one UPDATE, in this migration's
 * transaction; it is the only change a migration makes to the trail.
 */

/** Columns kept out of the audit trail (as migration 0027 set them). */
const HIDDEN_COLUMNS = [
  'password_hash',
  'production_secret_hash',
  'sandbox_secret_hash',
  'stripe_sandbox_key',
  'token_hash',
  'code_hash',
  'key_hash',
  'private_key_pkcs8',
  'secret',
  'previous_secret',
  'totp_secret',
  'totp_pending_secret',
  'csrf_token',
  'text_body',
  'html_body',
  'response_body',
  'route',
  'search_text',
  'updated_at',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function milepost_audit_policy(audited name, row_data jsonb, named_reference text,
      company uuid, env text) returns uuid language plpgsql stable as $$
    declare
      reference text;
      found uuid;
    begin
      if audited = 'policies' then return (row_data ->> 'id')::uuid; end if;
      if row_data ->> 'policy_id' is not null then return (row_data ->> 'policy_id')::uuid; end if;
      if audited = 'events' then
        reference := row_data #>> '{data,policy_reference}';
      elsif audited = 'webhook_deliveries' then
        select e.data ->> 'policy_reference' into reference from events e
        where e.id = (row_data ->> 'event_id')::uuid
          and e.created_at = (row_data ->> 'event_created_at')::timestamptz;
      end if;
      -- A row that names no policy (an account, a device, an email) is the named policy's.
      reference := coalesce(reference, named_reference);
      if reference is null then return null; end if;
      select p.id into found from policy_references r join policies p on p.id = r.policy_id
      where r.policy_reference = reference
        and (company is null or p.company_id = company) and (env is null or p.environment = env);
      return found;
    end $$`.execute(db);

  const hidden = sql.raw(`array[${HIDDEN_COLUMNS.map((c) => `'${c}'`).join(', ')}]`);
  await sql`
    create or replace function milepost_audit_row() returns trigger language plpgsql as $$
    declare
      ctx jsonb := current_setting('milepost.audit')::jsonb;
      audited name := milepost_audited_table(TG_RELID);
      hidden text[] := ${hidden};
      o jsonb;
      n jsonb;
      before_fields jsonb;
      after_fields jsonb;
      data jsonb;
      company uuid;
      env text;
      policy uuid;
    begin
      if audited = 'outbox_emails' then
        -- An email's data may hold a temporary password until it is rendered.
        hidden := hidden || array['data'];
      end if;
      if TG_OP <> 'INSERT' then o := to_jsonb(OLD); end if;
      if TG_OP <> 'DELETE' then n := to_jsonb(NEW); end if;
      -- The whole row, to find what it belongs to; only o and n, without the hidden columns, are kept.
      data := coalesce(n, o);
      o := o - hidden;
      n := n - hidden;
      if TG_OP = 'UPDATE' then
        select coalesce(jsonb_object_agg(key, value), '{}') into before_fields
          from jsonb_each(o) where value is distinct from n -> key;
        select coalesce(jsonb_object_agg(key, value), '{}') into after_fields
          from jsonb_each(n) where value is distinct from o -> key;
        if before_fields = '{}' and after_fields = '{}' then return null; end if;
      else
        before_fields := o;
        after_fields := n;
      end if;
      company := case when audited = 'companies' then (data ->> 'id')::uuid
                      else coalesce((data ->> 'company_id')::uuid, (ctx ->> 'company_id')::uuid) end;
      env := coalesce(data ->> 'environment', ctx ->> 'environment');
      policy := milepost_audit_policy(audited, data, ctx ->> 'policy_reference', company, env);
      if policy is not null and (company is null or env is null) then
        select coalesce(company, p.company_id), coalesce(env, p.environment) into company, env
        from policies p where p.id = policy;
      end if;
      insert into audit_records (occurred_at, request_id, actor, staff_id, role, action, resource,
        company_id, environment, policy_id, source_address, table_name, row_key, operation, before, after)
      values (
        (ctx ->> 'at')::timestamptz, ctx ->> 'request_id', ctx ->> 'actor', (ctx ->> 'staff_id')::uuid,
        ctx ->> 'role', ctx ->> 'action', ctx ->> 'resource', company, env, policy,
        ctx ->> 'source_address', audited,
        coalesce(data ->> 'id', data ->> 'policy_id', data ->> 'statement_id', data ->> 'event_id'),
        lower(TG_OP), before_fields, after_fields);
      return null;
    end $$`.execute(db);

  // ── Back-fill ───────────────────────────────────────────────────────────────────────────────
  await sql`alter table audit_records disable trigger audit_records_append_only`.execute(db);
  const sameTenant = sql`(a.company_id is null or p.company_id = a.company_id)
    and (a.environment is null or p.environment = a.environment)`;
  const eventReference = sql`coalesce(a.after #>> '{data,policy_reference}', a.before #>> '{data,policy_reference}')`;
  await sql`
    update audit_records a set policy_id = p.id
    from policy_references r join policies p on p.id = r.policy_id
    where a.policy_id is null and a.table_name = 'events' and r.policy_reference = ${eventReference}
      and ${sameTenant}`.execute(db);
  await sql`
    update audit_records a set policy_id = p.id
    from webhook_deliveries d
      join events e on e.id = d.event_id and e.created_at = d.event_created_at
      join policy_references r on r.policy_reference = e.data ->> 'policy_reference'
      join policies p on p.id = r.policy_id
    where a.policy_id is null and a.table_name = 'webhook_deliveries' and a.row_key = d.id::text
      and ${sameTenant}`.execute(db);
  await sql`
    update audit_records a set policy_id = p.id
    from policy_references r join policies p on p.id = r.policy_id
    where a.policy_id is null and a.outcome = 'ok' and a.resource like 'policy_reference:%'
      and r.policy_reference = substr(a.resource, length('policy_reference:') + 1)
      and not (a.table_name = 'events' and ${eventReference} is not null)
      and ${sameTenant}`.execute(db);
  await sql`
    update audit_records a
    set company_id = coalesce(a.company_id, p.company_id), environment = coalesce(a.environment, p.environment)
    from policies p
    where p.id = a.policy_id and (a.company_id is null or a.environment is null)`.execute(db);
  await sql`alter table audit_records enable trigger audit_records_append_only`.execute(db);
}
