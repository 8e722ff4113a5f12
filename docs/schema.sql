--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: EXTENSION pg_trgm; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';

--
-- Name: claim_payments_apply(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claim_payments_apply() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      update claim_exposures set paid_pence = paid_pence + new.amount_pence,
        settled_at = case when new.final then new.paid_at else null end, updated_at = new.paid_at
      where id = new.exposure_id and policy_id = new.policy_id and settled_at is null;
      if not found then
        raise exception 'exposure % is settled: no payment after its final one', new.exposure_id
          using errcode = 'check_violation';
      end if;
      return null;
    end $$;

--
-- Name: claim_payments_immutable(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claim_payments_immutable() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      raise exception 'claim payments are never rewritten' using errcode = 'P0001';
    end $$;

--
-- Name: claim_reserves_moved(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claim_reserves_moved() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    declare
      moved bigint := new.reserve_pence - case when TG_OP = 'INSERT' then 0 else old.reserve_pence end;
    begin
      if moved <> 0 then
        insert into claim_reserve_movements
          (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
        values (new.policy_id, new.claim_id, new.id, new.company_id, new.environment, 'reserve', moved,
          new.updated_at);
      end if;
      return null;
    end $$;

--
-- Name: claim_reserves_released(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claim_reserves_released() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    declare
      left_pence bigint;
    begin
      if new.final then
        select reserve_pence - paid_pence into left_pence from claim_exposures
        where id = new.exposure_id and policy_id = new.policy_id;
        if left_pence <> 0 then
          insert into claim_reserve_movements
            (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
          values (new.policy_id, new.claim_id, new.exposure_id, new.company_id, new.environment, 'release',
            -left_pence, new.paid_at);
        end if;
      end if;
      return null;
    end $$;

--
-- Name: claims_owe_first_notice(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claims_owe_first_notice() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      insert into claim_crashes_owed (crash_event_id, company_id, environment, policy_id, due_at, created_at)
      values (new.id, new.company_id, new.environment, new.policy_id, new.received_at, new.received_at);
      perform pg_notify('milepost_claims_owed', '');
      return null;
    end $$;

--
-- Name: claims_state_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.claims_state_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if TG_OP = 'INSERT' then
        if new.state not in ('draft', 'open') then
          raise exception 'a claim starts as draft or open, not %', new.state using errcode = 'check_violation';
        end if;
      elsif new.state is distinct from old.state and not exists (
          select 1 from (values ('draft', 'open'), ('draft', 'withdrawn'), ('draft', 'rejected'), ('open', 'settled'), ('open', 'rejected'), ('open', 'withdrawn'), ('reopened', 'settled'), ('reopened', 'rejected'), ('reopened', 'withdrawn'), ('settled', 'closed'), ('settled', 'reopened'), ('closed', 'reopened'), ('rejected', 'reopened'), ('withdrawn', 'reopened')) as t (from_state, to_state)
          where from_state = old.state and to_state = new.state) then
        raise exception 'a claim may not go from % to %', old.state, new.state using errcode = 'check_violation';
      end if;
      return new;
    end $$;

--
-- Name: crash_events_once(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.crash_events_once() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
    end $$;

--
-- Name: device_bindings_key(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.device_bindings_key(p_device_id uuid) RETURNS text
    LANGUAGE sql STABLE
    AS $$
      select coalesce(string_agg(policy_id::text || ' ' || extract(epoch from bound_at)::text || ' '
          || coalesce(extract(epoch from unbound_at)::text, '-'), ',' order by bound_at, id), '')
      from device_bindings
      where device_id = p_device_id
    $$;

--
-- Name: documents_immutable(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.documents_immutable() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      raise exception 'issued documents are immutable' using errcode = 'P0001';
    end $$;

--
-- Name: documents_queue_event(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.documents_queue_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      insert into document_pending_events (event_id, company_id, environment, type, data, created_at)
      values (new.id, new.company_id, new.environment, new.type, new.data, new.created_at);
      return null;
    end $$;

--
-- Name: journey_statement(uuid, boolean, boolean, uuid, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.journey_statement(p_statement_version_id uuid, p_late boolean, p_is_void boolean, p_policy_id uuid, p_start_at timestamp with time zone) RETURNS uuid
    LANGUAGE sql STABLE
    AS $$
      select coalesce(p_statement_version_id, case when not p_late and not p_is_void then (
        select s.id from statements s
        where s.policy_id = p_policy_id and s.period_end_at >= p_start_at
        order by s.period_end_at limit 1
      ) end)
    $$;

--
-- Name: milepost_audit_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_audit_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if TG_OP = 'UPDATE' and coalesce(current_setting('milepost.erasure', true), '') = 'on'
         and (to_jsonb(OLD) - 'before' - 'after') = (to_jsonb(NEW) - 'before' - 'after') then
        return NEW;
      end if;
      raise exception 'audit records are append-only' using errcode = 'P0001';
    end $$;

--
-- Name: milepost_audit_policy(name, jsonb, text, uuid, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_audit_policy(audited name, row_data jsonb, named_reference text, company uuid, env text) RETURNS uuid
    LANGUAGE plpgsql STABLE
    AS $$
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
    end $$;

--
-- Name: milepost_audit_row(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_audit_row() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    declare
      ctx jsonb := current_setting('milepost.audit')::jsonb;
      audited name := milepost_audited_table(TG_RELID);
      hidden text[] := array['password_hash', 'production_secret_hash', 'sandbox_secret_hash', 'stripe_sandbox_key', 'token_hash', 'code_hash', 'key_hash', 'private_key_pkcs8', 'secret', 'previous_secret', 'totp_secret', 'totp_pending_secret', 'csrf_token', 'text_body', 'html_body', 'response_body', 'route', 'search_text', 'updated_at'];
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
    end $$;

--
-- Name: milepost_audited_table(oid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_audited_table(relation oid) RETURNS name
    LANGUAGE sql STABLE
    AS $$
      select c.relname from pg_class c where c.oid = coalesce(pg_partition_root(relation), relation)
    $$;

--
-- Name: milepost_policy_search_text(text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_policy_search_text(reference text, snapshot jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
      select lower(concat_ws(' ', reference,
        snapshot #>> '{proposer,first_names}', snapshot #>> '{proposer,last_names}',
        snapshot #>> '{proposer,email}',
        snapshot #>> '{vehicle,reg}', replace(snapshot #>> '{vehicle,reg}', ' ', ''),
        snapshot #>> '{policy,address,postcode}', replace(snapshot #>> '{policy,address,postcode}', ' ', ''),
        snapshot #>> '{vehicle,overnight_postcode}'))
    $$;

--
-- Name: milepost_policy_search_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_policy_search_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      update policies set search_text = milepost_policy_search_text(policy_reference, new.snapshot)
      where id = new.policy_id;
      return null;
    end $$;

--
-- Name: milepost_rate_book_version_frozen(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.milepost_rate_book_version_frozen() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      if OLD.status = 'approved' then
        raise exception 'rate book version % is approved and cannot be changed or deleted', OLD.id
          using errcode = 'P0001';
      end if;
      return case when TG_OP = 'DELETE' then OLD else NEW end;
    end $$;

--
-- Name: notify_account_reference_changes(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_account_reference_changes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      perform pg_notify('milepost_policies', new.id::text);
      return null;
    end
    $$;

--
-- Name: notify_policy_changes(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_policy_changes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    declare
      owners text;
    begin
      select string_agg(distinct user_id::text, ',') into owners from changed;
      if owners is not null then
        perform pg_notify('milepost_policies', case when octet_length(owners) > 7000 then '*' else owners end);
      end if;
      return null;
    end
    $$;

--
-- Name: notify_policy_owner_changes(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.notify_policy_owner_changes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    declare
      owners text;
    begin
      if exists (select from changed offset 189) then
        perform pg_notify('milepost_policies', '*');
        return null;
      end if;
      select string_agg(distinct p.user_id::text, ',') into owners
      from changed c join policies p on p.id = c.policy_id;
      if owners is not null then
        perform pg_notify('milepost_policies', case when octet_length(owners) > 7000 then '*' else owners end);
      end if;
      return null;
    end
    $$;

--
-- Name: store_journey(uuid, uuid, text, uuid, text, uuid, text, text, smallint, integer, timestamp with time zone, timestamp with time zone, bigint, text, numeric, bigint, double precision, double precision, double precision, double precision, text, text, text, text, timestamp with time zone, integer, text, jsonb, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.store_journey(p_id uuid, p_company_id uuid, p_environment text, p_policy_id uuid, p_policy_reference text, p_policy_version_id uuid, p_provider_reference text, p_route text, p_route_precision smallint, p_point_count integer, p_start_at timestamp with time zone, p_end_at timestamp with time zone, p_distance_metres bigint, p_distance_unit text, p_usage_rate numeric, p_usage_premium_pence bigint, p_start_lat double precision, p_start_lng double precision, p_end_lat double precision, p_end_lng double precision, p_start_name text, p_start_postcode text, p_end_name text, p_end_postcode text, p_created_at timestamp with time zone, p_version_count integer, p_event_type text, p_event_data jsonb, p_source text, p_device_id text, p_gap_distance_metres bigint) RETURNS smallint
    LANGUAGE plpgsql
    AS $$
    declare
      v_billed_through timestamptz;
    begin
      select billed_through_at into v_billed_through from policies
      where id = p_policy_id and version_count = p_version_count for no key update;
      if not found then
        return 2;
      end if;
      -- Versions are never updated or deleted, so no lock is needed to rely on one.
      perform 1 from policy_versions where id = p_policy_version_id and policy_id = p_policy_id;
      if not found then
        raise exception 'policy version % is not a version of policy %', p_policy_version_id, p_policy_id
          using errcode = 'foreign_key_violation';
      end if;
      if p_end_at > p_start_at and (
        exists (
          select 1 from journey_keys
          where policy_id = p_policy_id and live and start_at >= p_start_at and start_at < p_end_at)
        or coalesce((
          select end_at > p_start_at from journey_keys
          where policy_id = p_policy_id and live and start_at < p_start_at
          order by start_at desc limit 1), false)) then
        return 1;
      end if;
      insert into journey_keys (policy_id, journey_id, start_at, end_at, provider_reference, live)
      values (p_policy_id, p_id, p_start_at, p_end_at, p_provider_reference, p_end_at > p_start_at)
      on conflict (policy_id, provider_reference) do nothing;
      if not found then
        return 1;
      end if;
      insert into journeys (
        id, company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
        route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
        usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
        start_name, start_postcode, end_name, end_postcode, created_at, late,
        source, device_id, gap_distance_metres
      ) values (
        p_id, p_company_id, p_environment, p_policy_id, p_policy_reference, p_policy_version_id,
        p_provider_reference, p_route, p_route_precision, p_point_count, p_start_at, p_end_at,
        p_distance_metres, p_distance_unit, p_usage_rate, p_usage_premium_pence,
        p_start_lat, p_start_lng, p_end_lat, p_end_lng,
        p_start_name, p_start_postcode, p_end_name, p_end_postcode, p_created_at,
        coalesce(p_start_at <= v_billed_through, false),
        p_source, p_device_id, p_gap_distance_metres
      );
      insert into events (company_id, environment, type, data, created_at)
      values (p_company_id, p_environment, p_event_type, p_event_data, p_created_at);
      return 0;
    end
    $$;

--
-- Name: store_positions(uuid, text, timestamp with time zone, timestamp with time zone, bigint[], uuid[], double precision[], double precision[], real[], real[], real[], boolean[], bigint[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.store_positions(p_device_id uuid, p_bindings_key text, p_received_at timestamp with time zone, p_latest timestamp with time zone, p_times bigint[], p_policy_ids uuid[], p_lats double precision[], p_lons double precision[], p_speeds real[], p_headings real[], p_accuracies real[], p_ignitions boolean[], p_odometers bigint[], p_attributes text[]) RETURNS json
    LANGUAGE plpgsql
    AS $$
    declare
      v_accepted integer;
      v_earliest timestamptz;
      v_offline_since timestamptz;
      v_after integer;
      v_last_seen timestamptz;
    begin
      if p_bindings_key is not null and p_bindings_key <> device_bindings_key(p_device_id) then
        return json_build_object('stale', true);
      end if;
      with inserted as (
        insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m,
          ignition, odometer_metres, received_at, attributes)
        select p_device_id, to_timestamp(t), p, la, lo, s, h, a, i, o, p_received_at, x::jsonb
        from unnest(p_times, p_policy_ids, p_lats, p_lons, p_speeds, p_headings, p_accuracies, p_ignitions,
          p_odometers, p_attributes) as u (t, p, la, lo, s, h, a, i, o, x)
        on conflict do nothing
        returning time
      )
      select count(*)::int, min(time) into v_accepted, v_earliest from inserted;
      if v_accepted = 0 then
        return json_build_object('accepted', 0);
      end if;
      -- What the trip cutting has still to read (from the earliest new time), and that a batch came
      -- (which a cut running meanwhile sees).
      update devices set
        last_seen_at = greatest(last_seen_at, p_latest),
        trips_pending_from = least(trips_pending_from, v_earliest),
        position_batches = position_batches + 1
      where id = p_device_id
      returning offline_since, offline_after_seconds, last_seen_at
      into v_offline_since, v_after, v_last_seen;
      if v_offline_since is null then
        return json_build_object('accepted', v_accepted);
      end if;
      return json_build_object('accepted', v_accepted, 'offline_after_seconds', v_after,
        'last_seen_ms', extract(epoch from v_last_seen) * 1000);
    end $$;

--
-- Name: store_quote(uuid, text, uuid, uuid, uuid, text, integer, text, text, json, json, json, text, json, text, timestamp with time zone, timestamp with time zone, bytea, uuid, timestamp with time zone, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.store_quote(p_company_id uuid, p_environment text, p_quote_reference uuid, p_quote_version_reference uuid, p_rate_book_version_id uuid, p_rate_book_reference text, p_rate_book_version integer, p_policy_reference text, p_applicant_email text, p_input json, p_pricing json, p_breakdown json, p_decision text, p_reasons json, p_referral_status text, p_created_at timestamp with time zone, p_expires_at timestamp with time zone, p_purchase_secret_hash bytea, p_product_id uuid, p_start_at timestamp with time zone, p_validity_days integer, p_default_validity_days integer) RETURNS uuid
    LANGUAGE plpgsql
    AS $$
    declare
      v_id uuid;
    begin
      insert into quotes (
        company_id, environment, quote_reference, quote_version_reference, rate_book_version_id,
        rate_book_reference, rate_book_version, policy_reference, applicant_email, input, pricing,
        breakdown, decision, reasons, referral_status, created_at, expires_at, purchase_secret_hash
      )
      select
        p_company_id, p_environment, p_quote_reference, p_quote_version_reference, p_rate_book_version_id,
        p_rate_book_reference, p_rate_book_version, p_policy_reference, p_applicant_email, p_input, p_pricing,
        p_breakdown, p_decision, p_reasons, p_referral_status, p_created_at, p_expires_at,
        p_purchase_secret_hash
      where (
          select v.id
          from rate_book_versions v
          join rate_books b on b.id = v.rate_book_id
          where b.company_id = p_company_id and b.environment = p_environment
            and b.product_id = p_product_id and v.status = 'approved' and v.effective_from <= p_start_at
          order by v.effective_from desc
          limit 1
        ) = p_rate_book_version_id
        and coalesce(
          (select s.validity_days from quote_settings s where s.company_id = p_company_id),
          p_default_validity_days
        ) = p_validity_days
      returning id into v_id;
      return v_id;
    end $$;

--
-- Name: webhook_queue_event(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_queue_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      -- Only tenants with an enabled endpoint pay for a row; test events go to one endpoint directly.
      if new.type <> 'webhook.test' and exists (
        select 1 from webhook_endpoints e
        where e.company_id = new.company_id and e.environment = new.environment and e.enabled
      ) then
        insert into webhook_pending_events (event_id, event_created_at) values (new.id, new.created_at);
      end if;
      return null;
    end
    $$;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audit_records; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_records (
    id bigint NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    request_id text NOT NULL,
    actor text NOT NULL,
    staff_id uuid,
    role text,
    action text NOT NULL,
    resource text,
    company_id uuid,
    environment text,
    policy_id uuid,
    source_address text,
    outcome text DEFAULT 'ok'::text NOT NULL,
    table_name text,
    row_key text,
    operation text,
    before jsonb,
    after jsonb,
    CONSTRAINT audit_records_operation_check CHECK ((operation = ANY (ARRAY['insert'::text, 'update'::text, 'delete'::text]))),
    CONSTRAINT audit_records_outcome_check CHECK ((outcome = ANY (ARRAY['ok'::text, 'denied'::text, 'failed'::text])))
);

--
-- Name: audit_records_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit_records ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.audit_records_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: auth_login_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_login_sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    token_hash bytea NOT NULL,
    user_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT auth_login_sessions_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: auth_refresh_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_refresh_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    family_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    user_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    rotated_at timestamp with time zone,
    revoked_at timestamp with time zone,
    revoked_reason text,
    successor_sealed text,
    CONSTRAINT auth_refresh_tokens_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: auth_reset_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_reset_codes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    code_hash text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT auth_reset_codes_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: auth_signing_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_signing_keys (
    kid text NOT NULL,
    algorithm text NOT NULL,
    public_jwk jsonb NOT NULL,
    private_key_pkcs8 text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    signs_until timestamp with time zone NOT NULL,
    published_until timestamp with time zone NOT NULL,
    CONSTRAINT auth_signing_keys_algorithm_check CHECK ((algorithm = 'Ed25519'::text))
);

--
-- Name: auth_throttles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_throttles (
    key_hash bytea NOT NULL,
    failures integer NOT NULL,
    last_failure_at timestamp with time zone NOT NULL,
    blocked_until timestamp with time zone
);

--
-- Name: claim_crashes_owed; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_crashes_owed (
    crash_event_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    due_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    leased_until timestamp with time zone,
    last_error text,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: claim_exposures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_exposures (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    claim_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    kind text NOT NULL,
    reserve_pence bigint NOT NULL,
    paid_pence bigint DEFAULT 0 NOT NULL,
    settled_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT claim_exposures_kind_known CHECK ((kind = ANY (ARRAY['own_vehicle'::text, 'other_vehicle'::text, 'injury'::text, 'windscreen'::text, 'theft'::text]))),
    CONSTRAINT claim_exposures_paid_within_reserve CHECK (((paid_pence >= 0) AND (paid_pence <= reserve_pence))),
    CONSTRAINT claim_exposures_reserve_range CHECK ((reserve_pence >= 0))
);

--
-- Name: claim_notes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_notes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    claim_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    author text NOT NULL,
    staff_id uuid,
    body text NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: claim_payments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_payments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    claim_id uuid NOT NULL,
    exposure_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    amount_pence bigint NOT NULL,
    final boolean NOT NULL,
    payee text NOT NULL,
    paid_at timestamp with time zone NOT NULL,
    payment_reference text,
    CONSTRAINT claim_payments_amount_positive CHECK ((amount_pence > 0)),
    CONSTRAINT claim_payments_reference_length CHECK (((char_length(payment_reference) >= 1) AND (char_length(payment_reference) <= 100)))
);

--
-- Name: claim_photos; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_photos (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    claim_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    content_type text NOT NULL,
    size_bytes integer NOT NULL,
    sha256 text NOT NULL,
    content bytea NOT NULL,
    uploaded_at timestamp with time zone NOT NULL,
    CONSTRAINT claim_photos_sha256_hex CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT claim_photos_size_range CHECK (((size_bytes >= 1) AND (size_bytes <= 10485760))),
    CONSTRAINT claim_photos_type_known CHECK ((content_type = ANY (ARRAY['image/jpeg'::text, 'image/png'::text, 'image/heic'::text, 'image/webp'::text])))
);

--
-- Name: claim_reserve_movements; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_reserve_movements (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    claim_id uuid NOT NULL,
    exposure_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    kind text NOT NULL,
    amount_pence bigint NOT NULL,
    moved_at timestamp with time zone NOT NULL,
    CONSTRAINT claim_reserve_movements_amount_nonzero CHECK ((amount_pence <> 0)),
    CONSTRAINT claim_reserve_movements_kind_known CHECK ((kind = ANY (ARRAY['reserve'::text, 'release'::text])))
);

--
-- Name: claim_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claim_settings (
    company_id uuid NOT NULL,
    environment text NOT NULL,
    response_hours integer NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    retention_years integer,
    CONSTRAINT claim_settings_response_range CHECK (((response_hours >= 1) AND (response_hours <= 720))),
    CONSTRAINT claim_settings_retention_range CHECK (((retention_years >= 1) AND (retention_years <= 100)))
);

--
-- Name: claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.claims (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    state text NOT NULL,
    source text NOT NULL,
    crash_event_id uuid,
    policy_version_id uuid,
    occurred_at timestamp with time zone NOT NULL,
    lat double precision,
    lon double precision,
    place_name text,
    postcode text,
    speed_kmh numeric(6,2),
    crash_file jsonb,
    cover jsonb,
    description text,
    other_parties text,
    injuries boolean,
    other_vehicles boolean,
    police_attended boolean,
    handler_staff_id uuid,
    respond_by timestamp with time zone,
    referred_at timestamp with time zone,
    legal_hold_reason text,
    legal_hold_at timestamp with time zone,
    erased_at timestamp with time zone,
    opened_at timestamp with time zone,
    closed_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    at_fault boolean,
    settled_at timestamp with time zone,
    ended_at timestamp with time zone,
    report_reference text,
    report_digest text,
    CONSTRAINT claims_crash_source CHECK (((source = 'crash'::text) = (crash_event_id IS NOT NULL))),
    CONSTRAINT claims_report_reference_digest CHECK (((report_reference IS NULL) = (report_digest IS NULL))),
    CONSTRAINT claims_report_reference_length CHECK (((char_length(report_reference) >= 1) AND (char_length(report_reference) <= 100))),
    CONSTRAINT claims_source_known CHECK ((source = ANY (ARRAY['crash'::text, 'reported'::text]))),
    CONSTRAINT claims_state_known CHECK ((state = ANY (ARRAY['draft'::text, 'open'::text, 'settled'::text, 'closed'::text, 'rejected'::text, 'withdrawn'::text, 'reopened'::text])))
);

--
-- Name: companies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.companies (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_reference text NOT NULL,
    name text NOT NULL,
    client_id text NOT NULL,
    production_secret_hash bytea NOT NULL,
    sandbox_secret_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    secrets_rotated_at timestamp with time zone,
    contact_email text,
    stripe_sandbox_key text NOT NULL,
    direct_debit_notice_working_days integer DEFAULT 10 NOT NULL,
    CONSTRAINT companies_direct_debit_notice_check CHECK (((direct_debit_notice_working_days >= 3) AND (direct_debit_notice_working_days <= 30)))
);

--
-- Name: crash_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.crash_events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    device_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    policy_reference text NOT NULL,
    source text NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    speed_kmh numeric(6,2) NOT NULL,
    peak_acceleration_g numeric(6,2),
    delta_v_kmh numeric(6,2),
    airbag_deployed boolean,
    received_at timestamp with time zone NOT NULL,
    CONSTRAINT crash_events_delta_v_range CHECK ((delta_v_kmh >= (0)::numeric)),
    CONSTRAINT crash_events_device_reports_force CHECK (((source = 'detected'::text) OR (peak_acceleration_g IS NOT NULL))),
    CONSTRAINT crash_events_g_range CHECK ((peak_acceleration_g >= (0)::numeric)),
    CONSTRAINT crash_events_lat_range CHECK (((lat >= ('-90'::integer)::double precision) AND (lat <= (90)::double precision))),
    CONSTRAINT crash_events_lon_range CHECK (((lon >= ('-180'::integer)::double precision) AND (lon <= (180)::double precision))),
    CONSTRAINT crash_events_source_known CHECK ((source = ANY (ARRAY['device'::text, 'detected'::text]))),
    CONSTRAINT crash_events_speed_range CHECK ((speed_kmh >= (0)::numeric))
);

--
-- Name: device_bindings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.device_bindings (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    device_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    policy_reference text NOT NULL,
    bound_at timestamp with time zone NOT NULL,
    unbound_at timestamp with time zone,
    CONSTRAINT device_bindings_period CHECK (((unbound_at IS NULL) OR (unbound_at >= bound_at)))
);

--
-- Name: devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.devices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    device_id text NOT NULL,
    kind text NOT NULL,
    vin text,
    last_seen_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    trips_pending_from timestamp with time zone,
    position_batches bigint DEFAULT 0 NOT NULL,
    trips_lease_until timestamp with time zone,
    trips_cut_at timestamp with time zone,
    open_trip_from timestamp with time zone,
    offline_since timestamp with time zone,
    estimated_through date,
    trips_lease_id uuid,
    offline_after_seconds integer,
    CONSTRAINT devices_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT devices_kind CHECK ((kind = ANY (ARRAY['obd'::text, 'connected_car'::text, 'phone'::text]))),
    CONSTRAINT devices_offline_after_seconds_check CHECK ((offline_after_seconds > 0))
);

--
-- Name: direct_debit_mandates; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.direct_debit_mandates (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    provider text NOT NULL,
    provider_customer_id text NOT NULL,
    setup_intent_id text NOT NULL,
    payment_method_id text,
    provider_mandate_id text,
    reference text,
    status text NOT NULL,
    account_holder_name text,
    sort_code text,
    account_last4 text,
    is_default boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    activated_at timestamp with time zone,
    cancelled_at timestamp with time zone,
    cancel_reason text,
    CONSTRAINT direct_debit_mandates_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT direct_debit_mandates_status_check CHECK ((status = ANY (ARRAY['setup'::text, 'pending'::text, 'active'::text, 'inactive'::text])))
);

--
-- Name: document_files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.document_files (
    document_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    content bytea NOT NULL
);

--
-- Name: document_logos; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.document_logos (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    media_type text NOT NULL,
    sha256 text NOT NULL,
    size_bytes integer NOT NULL,
    width_px integer NOT NULL,
    height_px integer NOT NULL,
    bytes bytea NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT document_logos_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT document_logos_media_type_check CHECK ((media_type = ANY (ARRAY['image/png'::text, 'image/svg+xml'::text]))),
    CONSTRAINT document_logos_size_check CHECK (((size_bytes = octet_length(bytes)) AND (size_bytes <= 262144)))
);

--
-- Name: document_pending_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.document_pending_events (
    event_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: document_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.document_settings (
    company_id uuid NOT NULL,
    environment text NOT NULL,
    attach_to_emails boolean DEFAULT false NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

--
-- Name: document_templates; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.document_templates (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    version integer NOT NULL,
    product_reference text,
    effective_from date NOT NULL,
    company_name text NOT NULL,
    insurer_name text NOT NULL,
    colour_hex text NOT NULL,
    logo_id uuid,
    logo_sha256 text,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT document_templates_colour_check CHECK ((colour_hex ~ '^#[0-9a-f]{6}$'::text)),
    CONSTRAINT document_templates_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT document_templates_logo_check CHECK (((logo_id IS NULL) = (logo_sha256 IS NULL)))
);

--
-- Name: documents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.documents (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    kind text NOT NULL,
    policy_version_id uuid,
    statement_id uuid,
    payment_id uuid,
    journey_id uuid,
    template_version text NOT NULL,
    sha256 text NOT NULL,
    size_bytes integer NOT NULL,
    file_name text NOT NULL,
    issued_at timestamp with time zone NOT NULL,
    source_event_id uuid,
    reissue_of uuid,
    reissue_reason text,
    CONSTRAINT documents_kind_known CHECK ((kind = ANY (ARRAY['certificate'::text, 'schedule'::text, 'ipid'::text, 'statement_of_fact'::text, 'renewal_notice'::text, 'statement'::text, 'credit_note'::text, 'cancellation_notice'::text]))),
    CONSTRAINT documents_origin CHECK (((source_event_id IS NULL) <> (reissue_of IS NULL))),
    CONSTRAINT documents_sha256_hex CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT documents_size_positive CHECK ((size_bytes > 0))
);

--
-- Name: documents_owed; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.documents_owed (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    event_id uuid NOT NULL,
    kind text NOT NULL,
    policy_version_id uuid,
    statement_id uuid,
    payment_id uuid,
    journey_id uuid,
    due_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    leased_until timestamp with time zone,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT documents_owed_kind_known CHECK ((kind = ANY (ARRAY['certificate'::text, 'schedule'::text, 'ipid'::text, 'statement_of_fact'::text, 'renewal_notice'::text, 'statement'::text, 'credit_note'::text, 'cancellation_notice'::text])))
);

--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    sequence bigint NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp(3) with time zone NOT NULL
)
PARTITION BY RANGE (created_at);

--
-- Name: events_sequence_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.events_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: events_sequence_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.events_sequence_seq OWNED BY public.events.sequence;

--
-- Name: events_default; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events_default (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    sequence bigint DEFAULT nextval('public.events_sequence_seq'::regclass) NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp(3) with time zone NOT NULL
);

--
-- Name: housekeeping_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.housekeeping_runs (
    id bigint NOT NULL,
    ran_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_rows integer DEFAULT 0 NOT NULL
);

--
-- Name: housekeeping_runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.housekeeping_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.housekeeping_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: journey_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.journey_keys (
    policy_id uuid NOT NULL,
    journey_id uuid NOT NULL,
    start_at timestamp with time zone NOT NULL,
    end_at timestamp with time zone NOT NULL,
    provider_reference text,
    live boolean NOT NULL
)
WITH (fillfactor='100', autovacuum_vacuum_insert_threshold='50000', autovacuum_vacuum_insert_scale_factor='0');

--
-- Name: journey_rule_credits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.journey_rule_credits (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    journey_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    statement_id uuid NOT NULL,
    rule text NOT NULL,
    day date NOT NULL,
    distance_metres bigint NOT NULL,
    credit_pence bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT journey_rule_credits_rule_check CHECK ((rule = ANY (ARRAY['daily_cap'::text, 'annual_cap'::text, 'free_distance'::text])))
);

--
-- Name: journey_voids; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.journey_voids (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    journey_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    reason text NOT NULL,
    billed_statement_version_id uuid,
    credited_statement_version_id uuid,
    usage_premium_pence bigint NOT NULL,
    request_id text,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT journey_voids_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: journeys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.journeys (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    policy_reference text NOT NULL,
    policy_version_id uuid NOT NULL,
    provider_reference text,
    route text NOT NULL,
    route_precision smallint NOT NULL,
    point_count integer NOT NULL,
    start_at timestamp with time zone NOT NULL,
    end_at timestamp with time zone NOT NULL,
    distance_metres bigint NOT NULL,
    distance_unit text NOT NULL,
    usage_rate numeric NOT NULL,
    usage_premium_pence bigint NOT NULL,
    start_lat double precision,
    start_lng double precision,
    end_lat double precision,
    end_lng double precision,
    start_name text,
    start_postcode text,
    end_name text,
    end_postcode text,
    is_void boolean DEFAULT false NOT NULL,
    voided_at timestamp with time zone,
    void_reason text,
    statement_version_id uuid,
    created_at timestamp with time zone NOT NULL,
    late boolean DEFAULT false NOT NULL,
    source text DEFAULT 'api'::text NOT NULL,
    device_id text,
    gap_distance_metres bigint DEFAULT 0 NOT NULL,
    CONSTRAINT journeys_distance_metres_check CHECK ((distance_metres >= 0)),
    CONSTRAINT journeys_distance_unit_check CHECK ((distance_unit = ANY (ARRAY['mile'::text, 'km'::text]))),
    CONSTRAINT journeys_end_after_start CHECK (((end_at > start_at) OR ((source = 'odometer_reconciliation'::text) AND (end_at = start_at)))),
    CONSTRAINT journeys_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT journeys_gap_distance CHECK (((gap_distance_metres >= 0) AND (gap_distance_metres <= distance_metres))),
    CONSTRAINT journeys_point_count CHECK ((((source = ANY (ARRAY['api'::text, 'device'::text])) AND ((point_count >= 2) OR ((route = ''::text) AND (point_count = 0)))) OR ((source = ANY (ARRAY['estimate'::text, 'odometer_reconciliation'::text])) AND (point_count = 0)))),
    CONSTRAINT journeys_route_precision_check CHECK ((route_precision = ANY (ARRAY[5, 6]))),
    CONSTRAINT journeys_source CHECK ((source = ANY (ARRAY['api'::text, 'device'::text, 'estimate'::text, 'odometer_reconciliation'::text]))),
    CONSTRAINT journeys_usage_premium_pence_check CHECK ((usage_premium_pence >= 0)),
    CONSTRAINT journeys_usage_rate_check CHECK ((usage_rate >= (0)::numeric)),
    CONSTRAINT journeys_void_consistent CHECK ((is_void = (voided_at IS NOT NULL)))
)
PARTITION BY RANGE (start_at);

--
-- Name: journeys_default; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.journeys_default (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    policy_reference text NOT NULL,
    policy_version_id uuid NOT NULL,
    provider_reference text,
    route text NOT NULL,
    route_precision smallint NOT NULL,
    point_count integer NOT NULL,
    start_at timestamp with time zone NOT NULL,
    end_at timestamp with time zone NOT NULL,
    distance_metres bigint NOT NULL,
    distance_unit text NOT NULL,
    usage_rate numeric NOT NULL,
    usage_premium_pence bigint NOT NULL,
    start_lat double precision,
    start_lng double precision,
    end_lat double precision,
    end_lng double precision,
    start_name text,
    start_postcode text,
    end_name text,
    end_postcode text,
    is_void boolean DEFAULT false NOT NULL,
    voided_at timestamp with time zone,
    void_reason text,
    statement_version_id uuid,
    created_at timestamp with time zone NOT NULL,
    late boolean DEFAULT false NOT NULL,
    source text DEFAULT 'api'::text NOT NULL,
    device_id text,
    gap_distance_metres bigint DEFAULT 0 NOT NULL,
    CONSTRAINT journeys_distance_metres_check CHECK ((distance_metres >= 0)),
    CONSTRAINT journeys_distance_unit_check CHECK ((distance_unit = ANY (ARRAY['mile'::text, 'km'::text]))),
    CONSTRAINT journeys_end_after_start CHECK (((end_at > start_at) OR ((source = 'odometer_reconciliation'::text) AND (end_at = start_at)))),
    CONSTRAINT journeys_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT journeys_gap_distance CHECK (((gap_distance_metres >= 0) AND (gap_distance_metres <= distance_metres))),
    CONSTRAINT journeys_point_count CHECK ((((source = ANY (ARRAY['api'::text, 'device'::text])) AND ((point_count >= 2) OR ((route = ''::text) AND (point_count = 0)))) OR ((source = ANY (ARRAY['estimate'::text, 'odometer_reconciliation'::text])) AND (point_count = 0)))),
    CONSTRAINT journeys_route_precision_check CHECK ((route_precision = ANY (ARRAY[5, 6]))),
    CONSTRAINT journeys_source CHECK ((source = ANY (ARRAY['api'::text, 'device'::text, 'estimate'::text, 'odometer_reconciliation'::text]))),
    CONSTRAINT journeys_usage_premium_pence_check CHECK ((usage_premium_pence >= 0)),
    CONSTRAINT journeys_usage_rate_check CHECK ((usage_rate >= (0)::numeric)),
    CONSTRAINT journeys_void_consistent CHECK ((is_void = (voided_at IS NOT NULL)))
)
WITH (fillfactor='100', autovacuum_vacuum_insert_threshold='50000', autovacuum_vacuum_insert_scale_factor='0');

--
-- Name: kysely_migration; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kysely_migration (
    name character varying(255) NOT NULL,
    "timestamp" character varying(255) NOT NULL
);

--
-- Name: kysely_migration_lock; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.kysely_migration_lock (
    id character varying(255) NOT NULL,
    is_locked integer DEFAULT 0 NOT NULL
);

--
-- Name: mileage_budgets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mileage_budgets (
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    distance_per_month numeric NOT NULL,
    usage_unit text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT mileage_budgets_distance_positive CHECK ((distance_per_month > (0)::numeric)),
    CONSTRAINT mileage_budgets_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT mileage_budgets_usage_unit CHECK ((usage_unit = ANY (ARRAY['mile'::text, 'km'::text])))
);

--
-- Name: minimised_trips; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.minimised_trips (
    device_id uuid NOT NULL,
    start_at timestamp with time zone NOT NULL,
    end_at timestamp with time zone NOT NULL,
    positions_deleted integer NOT NULL,
    minimised_at timestamp with time zone NOT NULL,
    CONSTRAINT minimised_trips_span_check CHECK (((end_at >= start_at) AND (positions_deleted >= 0)))
);

--
-- Name: odometer_readings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.odometer_readings (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    device_id text,
    reading_metres bigint NOT NULL,
    "time" timestamp with time zone NOT NULL,
    source text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT odometer_readings_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT odometer_readings_reading_metres_check CHECK ((reading_metres >= 0)),
    CONSTRAINT odometer_readings_source_check CHECK ((source = ANY (ARRAY['connected_car'::text, 'photo'::text, 'mot'::text])))
);

--
-- Name: outbox_emails; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox_emails (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid,
    environment text,
    template text NOT NULL,
    recipient text NOT NULL,
    subject text,
    text_body text,
    html_body text,
    status text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    sent_at timestamp with time zone,
    data jsonb,
    user_id uuid,
    attachments jsonb,
    CONSTRAINT outbox_emails_content CHECK (((subject IS NOT NULL) OR (data IS NOT NULL))),
    CONSTRAINT outbox_emails_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'logged'::text, 'failed'::text])))
);

--
-- Name: payment_customers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payment_customers (
    company_id uuid NOT NULL,
    environment text NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    provider_customer_id text NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: payments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid,
    policy_version_id uuid,
    kind text NOT NULL,
    purpose text NOT NULL,
    status text NOT NULL,
    amount_pence bigint NOT NULL,
    refunded_pence bigint DEFAULT 0 NOT NULL,
    currency character(3) NOT NULL,
    provider text NOT NULL,
    provider_payment_id text,
    provider_customer_id text,
    payment_method_id text,
    refund_of uuid,
    decline_code text,
    error_message text,
    attempts integer DEFAULT 0 NOT NULL,
    first_failed_at timestamp with time zone,
    next_attempt_at timestamp with time zone,
    awaiting_new_card boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    method_type text DEFAULT 'card'::text NOT NULL,
    mandate_id uuid,
    collect_on date,
    notice_sent_at timestamp with time zone,
    settled_at timestamp with time zone,
    attempt_pinned integer,
    attempt_payment_method_id text,
    attempt_mandate_id uuid,
    CONSTRAINT payments_amount_pence_check CHECK ((amount_pence >= 0)),
    CONSTRAINT payments_collection_check CHECK (((method_type = 'card'::text) OR (collect_on IS NOT NULL))),
    CONSTRAINT payments_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT payments_kind_check CHECK ((kind = ANY (ARRAY['charge'::text, 'refund'::text]))),
    CONSTRAINT payments_method_type_check CHECK ((method_type = ANY (ARRAY['card'::text, 'bacs_debit'::text]))),
    CONSTRAINT payments_purpose_check CHECK ((purpose = ANY (ARRAY['new_business'::text, 'renewal'::text, 'adjustment'::text, 'cancellation'::text, 'statement'::text, 'intent'::text]))),
    CONSTRAINT payments_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text, 'refunded'::text, 'requires_action'::text, 'canceled'::text, 'scheduled'::text, 'processing'::text])))
);

--
-- Name: policies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policies (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_reference text NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    user_id uuid NOT NULL,
    status text NOT NULL,
    version_count integer NOT NULL,
    current_start_at timestamp with time zone NOT NULL,
    current_end_at timestamp with time zone NOT NULL,
    auto_renew boolean DEFAULT false NOT NULL,
    renewal_terms jsonb,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    payments_revision integer DEFAULT 0 NOT NULL,
    billing_day smallint,
    subscription_premium_pence bigint,
    subscription_installments smallint,
    first_start_at timestamp with time zone,
    billed_through_at timestamp with time zone,
    product_reference text,
    search_text text,
    prepaid_installments integer DEFAULT 0 NOT NULL,
    CONSTRAINT policies_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT policies_prepaid_installments_check CHECK ((prepaid_installments >= 0)),
    CONSTRAINT policies_status_check CHECK ((status = ANY (ARRAY['active'::text, 'cancelled'::text, 'lapsed'::text]))),
    CONSTRAINT policies_terms_kept CHECK (((version_count = 0) OR ((subscription_premium_pence IS NOT NULL) AND (first_start_at IS NOT NULL))))
)
WITH (fillfactor='80');

--
-- Name: policy_credits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_credits (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    amount_pence bigint NOT NULL,
    source text NOT NULL,
    reference text NOT NULL,
    reason text,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT policy_credits_amount_pence_check CHECK ((amount_pence <> 0)),
    CONSTRAINT policy_credits_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT policy_credits_source_check CHECK ((source = ANY (ARRAY['void'::text, 'goodwill'::text, 'refund'::text, 'statement'::text, 'carried_forward'::text])))
);

--
-- Name: policy_references; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_references (
    policy_reference text NOT NULL,
    policy_id uuid NOT NULL
);

--
-- Name: policy_usage_years; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_usage_years (
    policy_id uuid NOT NULL,
    year_start_at timestamp with time zone NOT NULL,
    charged_metres bigint NOT NULL
);

--
-- Name: policy_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_versions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    sequence integer NOT NULL,
    version_type text NOT NULL,
    snapshot jsonb,
    effective_at timestamp with time zone NOT NULL,
    statement_start_at timestamp with time zone,
    statement_end_at timestamp with time zone,
    usage_premium_pence bigint,
    reason text,
    created_at timestamp with time zone NOT NULL,
    term integer,
    superseded_at timestamp with time zone,
    CONSTRAINT policy_versions_snapshot_kept CHECK (((snapshot IS NOT NULL) OR (version_type = 'st'::text))),
    CONSTRAINT policy_versions_version_type_check CHECK ((version_type = ANY (ARRAY['nb'::text, 'mta'::text, 'st'::text, 'cn'::text, 'rn'::text, 'ls'::text])))
)
WITH (toast_tuple_target='8160');

--
-- Name: positions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.positions (
    device_id uuid NOT NULL,
    "time" timestamp with time zone NOT NULL,
    policy_id uuid NOT NULL,
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    speed_kmh real,
    heading real,
    accuracy_m real,
    ignition boolean,
    odometer_metres bigint,
    received_at timestamp with time zone NOT NULL,
    attributes jsonb
)
PARTITION BY RANGE ("time");

--
-- Name: positions_default; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.positions_default (
    device_id uuid NOT NULL,
    "time" timestamp with time zone NOT NULL,
    policy_id uuid NOT NULL,
    lat double precision NOT NULL,
    lon double precision NOT NULL,
    speed_kmh real,
    heading real,
    accuracy_m real,
    ignition boolean,
    odometer_metres bigint,
    received_at timestamp with time zone NOT NULL,
    attributes jsonb
);

--
-- Name: processed_payment_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.processed_payment_events (
    provider text NOT NULL,
    event_id text NOT NULL,
    type text NOT NULL,
    processed_at timestamp with time zone NOT NULL
);

--
-- Name: product_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_versions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    product_id uuid NOT NULL,
    sequence integer NOT NULL,
    name text NOT NULL,
    rules jsonb NOT NULL,
    effective_from timestamp with time zone NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: products; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.products (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    product_reference text NOT NULL,
    usage_unit text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT products_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT products_usage_unit_check CHECK ((usage_unit = ANY (ARRAY['mile'::text, 'km'::text])))
);

--
-- Name: quote_bindings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quote_bindings (
    quote_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    policy_version_id uuid NOT NULL,
    bound_at timestamp with time zone NOT NULL
);

--
-- Name: quote_purchases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quote_purchases (
    quote_id uuid NOT NULL,
    provider_payment_id text NOT NULL,
    provider_customer_id text NOT NULL,
    amount_pence bigint NOT NULL,
    status text DEFAULT 'paying'::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT quote_purchases_amount_check CHECK ((amount_pence > 0)),
    CONSTRAINT quote_purchases_status_check CHECK ((status = ANY (ARRAY['paying'::text, 'bound'::text, 'refunded'::text, 'cancelled'::text])))
);

--
-- Name: quote_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quote_settings (
    company_id uuid NOT NULL,
    validity_days integer DEFAULT 30 NOT NULL,
    retention_days integer DEFAULT 90 NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    quote_page_product text,
    CONSTRAINT quote_settings_retention_check CHECK (((retention_days >= 1) AND (retention_days <= 3650))),
    CONSTRAINT quote_settings_validity_check CHECK (((validity_days >= 1) AND (validity_days <= 365)))
);

--
-- Name: quotes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.quotes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    quote_reference uuid NOT NULL,
    quote_version_reference uuid NOT NULL,
    rate_book_version_id uuid NOT NULL,
    rate_book_reference text NOT NULL,
    rate_book_version integer NOT NULL,
    policy_reference text,
    applicant_email text,
    input json NOT NULL,
    pricing json NOT NULL,
    breakdown json NOT NULL,
    decision text NOT NULL,
    reasons json NOT NULL,
    referral_status text,
    referral_reason text,
    referral_decided_by text,
    referral_staff_id uuid,
    referral_decided_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    pseudonymised_at timestamp with time zone,
    purchase_secret_hash bytea,
    CONSTRAINT quotes_decision_check CHECK ((decision = ANY (ARRAY['accept'::text, 'refer'::text, 'decline'::text]))),
    CONSTRAINT quotes_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT quotes_expiry_check CHECK ((expires_at > created_at)),
    CONSTRAINT quotes_referral_check CHECK ((((decision = 'refer'::text) AND (referral_status = ANY (ARRAY['pending'::text, 'approved'::text, 'declined'::text]))) OR ((decision <> 'refer'::text) AND (referral_status IS NULL)))),
    CONSTRAINT quotes_referral_decided_check CHECK ((((referral_status IS DISTINCT FROM 'pending'::text) AND (referral_status IS NOT NULL) AND (referral_reason IS NOT NULL) AND (referral_decided_by IS NOT NULL) AND (referral_decided_at IS NOT NULL)) OR (((referral_status IS NULL) OR (referral_status = 'pending'::text)) AND (referral_reason IS NULL) AND (referral_decided_by IS NULL) AND (referral_decided_at IS NULL))))
)
WITH (toast_tuple_target='2700');

--
-- Name: rate_book_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_book_versions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    rate_book_id uuid NOT NULL,
    version_number integer NOT NULL,
    status text NOT NULL,
    content jsonb NOT NULL,
    effective_from timestamp with time zone,
    author text NOT NULL,
    author_staff_id uuid,
    contributor_staff_ids uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    contributors text[] DEFAULT '{}'::text[] NOT NULL,
    approver text,
    approver_staff_id uuid,
    approved_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT rate_book_versions_approval_check CHECK ((((status = 'draft'::text) AND (approver IS NULL) AND (approver_staff_id IS NULL) AND (approved_at IS NULL)) OR ((status = 'approved'::text) AND (approver IS NOT NULL) AND (approver_staff_id IS NOT NULL) AND (approved_at IS NOT NULL) AND (effective_from IS NOT NULL)))),
    CONSTRAINT rate_book_versions_contributors_check CHECK ((cardinality(contributors) = cardinality(contributor_staff_ids))),
    CONSTRAINT rate_book_versions_four_eyes_check CHECK (((approver_staff_id IS NULL) OR (NOT (approver_staff_id = ANY (contributor_staff_ids))))),
    CONSTRAINT rate_book_versions_number_check CHECK ((version_number >= 1)),
    CONSTRAINT rate_book_versions_status_check CHECK ((status = ANY (ARRAY['draft'::text, 'approved'::text])))
);

--
-- Name: rate_books; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_books (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    rate_book_reference text NOT NULL,
    product_id uuid NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT rate_books_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: renewal_prices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.renewal_prices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    policy_id uuid NOT NULL,
    policy_reference text NOT NULL,
    product_id uuid NOT NULL,
    product_reference text NOT NULL,
    rate_book_version_id uuid,
    stage text NOT NULL,
    outcome text NOT NULL,
    start_at timestamp with time zone NOT NULL,
    rated_on date NOT NULL,
    cap_applied boolean NOT NULL,
    capped text[] DEFAULT '{}'::text[] NOT NULL,
    renewal_yearly_pence bigint,
    new_business_yearly_pence bigint,
    last_year_yearly_pence bigint,
    renewal_pricing jsonb,
    new_business_pricing jsonb,
    rated_pricing jsonb,
    last_year_pricing jsonb,
    reasons jsonb DEFAULT '[]'::jsonb NOT NULL,
    priced_at timestamp with time zone NOT NULL,
    held_to_notice text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT renewal_prices_cap_check CHECK (((renewal_yearly_pence IS NULL) OR (new_business_yearly_pence IS NULL) OR (renewal_yearly_pence <= new_business_yearly_pence))),
    CONSTRAINT renewal_prices_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT renewal_prices_held_to_notice_check CHECK (((held_to_notice <@ ARRAY['fixed'::text, 'per_unit'::text]) AND ((stage = 'renewal'::text) OR (held_to_notice = '{}'::text[])))),
    CONSTRAINT renewal_prices_outcome_check CHECK ((outcome = ANY (ARRAY['priced'::text, 'declined'::text, 'referred'::text, 'unratable'::text]))),
    CONSTRAINT renewal_prices_priced_check CHECK (((outcome = 'priced'::text) = ((renewal_pricing IS NOT NULL) AND (new_business_pricing IS NOT NULL) AND (renewal_yearly_pence IS NOT NULL) AND (new_business_yearly_pence IS NOT NULL) AND (rate_book_version_id IS NOT NULL)))),
    CONSTRAINT renewal_prices_stage_check CHECK ((stage = ANY (ARRAY['notice'::text, 'renewal'::text])))
);

--
-- Name: score_disputes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.score_disputes (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    event_id uuid NOT NULL,
    journey_id uuid NOT NULL,
    month text NOT NULL,
    reason text NOT NULL,
    details text,
    state text NOT NULL,
    decision_reason text,
    decided_by text,
    decided_staff_id uuid,
    created_at timestamp with time zone NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT score_disputes_decision_check CHECK ((((state = 'pending'::text) = (decided_at IS NULL)) AND ((state = 'pending'::text) = (decision_reason IS NULL)))),
    CONSTRAINT score_disputes_details_check CHECK ((((details IS NULL) OR ((char_length(details) >= 1) AND (char_length(details) <= 1000))) AND ((reason <> 'other'::text) OR (details IS NOT NULL)))),
    CONSTRAINT score_disputes_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT score_disputes_month_check CHECK ((month ~ '^[0-9]{4}-[0-9]{2}$'::text)),
    CONSTRAINT score_disputes_reason_check CHECK ((reason = ANY (ARRAY['passenger'::text, 'gps_error'::text, 'other'::text]))),
    CONSTRAINT score_disputes_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'accepted'::text, 'rejected'::text])))
);

--
-- Name: score_months; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.score_months (
    policy_id uuid NOT NULL,
    month text NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    score numeric(4,1),
    distance_metres bigint NOT NULL,
    provisional boolean NOT NULL,
    closed_at timestamp with time zone NOT NULL,
    CONSTRAINT score_months_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: staff; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.staff (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    password_hash text NOT NULL,
    password_is_temporary boolean NOT NULL,
    totp_secret text,
    totp_pending_secret text,
    totp_last_step bigint,
    active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    last_sign_in_at timestamp with time zone,
    CONSTRAINT staff_role_check CHECK ((role = ANY (ARRAY['admin'::text, 'operations'::text, 'viewer'::text, 'claims'::text])))
);

--
-- Name: staff_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.staff_sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    staff_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    csrf_token text NOT NULL,
    stage text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT staff_sessions_stage_check CHECK ((stage = ANY (ARRAY['new_password'::text, 'totp_enrol'::text, 'totp'::text, 'active'::text])))
);

--
-- Name: statement_odometers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.statement_odometers (
    statement_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    start_metres bigint NOT NULL,
    start_at timestamp with time zone NOT NULL,
    end_metres bigint NOT NULL,
    end_at timestamp with time zone NOT NULL,
    gps_metres bigint NOT NULL,
    CONSTRAINT statement_odometers_gps_metres_check CHECK ((gps_metres >= 0)),
    CONSTRAINT statement_odometers_readings CHECK (((end_metres >= start_metres) AND (end_at > start_at)))
);

--
-- Name: statements; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.statements (
    id uuid NOT NULL,
    policy_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    period_start_at timestamp with time zone NOT NULL,
    period_end_at timestamp with time zone NOT NULL,
    billing_date date,
    final boolean DEFAULT false NOT NULL,
    journey_count integer NOT NULL,
    distance_metres bigint NOT NULL,
    duration_seconds bigint NOT NULL,
    usage_premium_pence bigint NOT NULL,
    installments integer NOT NULL,
    subscription_premium_pence bigint NOT NULL,
    total_premium_pence bigint NOT NULL,
    credits_used_pence bigint NOT NULL,
    billed_premium_pence bigint NOT NULL,
    payment_id uuid,
    created_at timestamp with time zone NOT NULL,
    carried_forward_pence bigint DEFAULT 0 NOT NULL,
    brought_forward_pence bigint DEFAULT 0 NOT NULL,
    cap_credit_pence bigint DEFAULT 0 NOT NULL,
    annual_cap_credit_pence bigint DEFAULT 0 NOT NULL,
    free_distance_credit_pence bigint DEFAULT 0 NOT NULL,
    minimum_top_up_pence bigint DEFAULT 0 NOT NULL,
    capped_days jsonb DEFAULT '[]'::jsonb NOT NULL,
    score_adjustment_pence bigint DEFAULT 0 NOT NULL,
    score_months jsonb DEFAULT '[]'::jsonb NOT NULL,
    CONSTRAINT statements_billed_not_negative CHECK (((billed_premium_pence >= 0) AND (credits_used_pence >= 0))),
    CONSTRAINT statements_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT statements_period_order CHECK ((period_end_at >= period_start_at)),
    CONSTRAINT statements_totals_add_up CHECK (((total_premium_pence = (usage_premium_pence + subscription_premium_pence)) AND (billed_premium_pence = (((((((total_premium_pence - cap_credit_pence) - annual_cap_credit_pence) - free_distance_credit_pence) + minimum_top_up_pence) + score_adjustment_pence) - credits_used_pence) + brought_forward_pence)) AND (cap_credit_pence >= 0) AND (annual_cap_credit_pence >= 0) AND (free_distance_credit_pence >= 0) AND (minimum_top_up_pence >= 0) AND ((carried_forward_pence >= 0) AND (carried_forward_pence <= billed_premium_pence)) AND (brought_forward_pence >= 0)))
);

--
-- Name: stripe_sandbox_idempotency; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stripe_sandbox_idempotency (
    account text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    status integer,
    body jsonb,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: stripe_sandbox_objects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stripe_sandbox_objects (
    id text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

--
-- Name: telematics_settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.telematics_settings (
    company_id uuid NOT NULL,
    minimise_positions boolean NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

--
-- Name: trip_score_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.trip_score_events (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    policy_id uuid NOT NULL,
    journey_id uuid NOT NULL,
    kind text NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    lat double precision NOT NULL,
    lng double precision NOT NULL,
    speed_kmh double precision NOT NULL,
    acceleration_mps2 double precision,
    duration_seconds integer,
    CONSTRAINT trip_score_events_kind_check CHECK ((kind = ANY (ARRAY['harsh_braking'::text, 'rapid_acceleration'::text, 'harsh_cornering'::text, 'speeding'::text, 'fatigue'::text])))
);

--
-- Name: trip_scores; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.trip_scores (
    policy_id uuid NOT NULL,
    journey_id uuid NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    month text NOT NULL,
    start_at timestamp with time zone NOT NULL,
    distance_metres bigint NOT NULL,
    night_metres bigint NOT NULL,
    score numeric(4,1),
    voided_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT trip_scores_distance_check CHECK (((distance_metres >= 0) AND (night_metres >= 0))),
    CONSTRAINT trip_scores_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text]))),
    CONSTRAINT trip_scores_month_check CHECK ((month ~ '^[0-9]{4}-[0-9]{2}$'::text)),
    CONSTRAINT trip_scores_score_check CHECK (((score >= (0)::numeric) AND (score <= (100)::numeric)))
);

--
-- Name: usage_alerts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.usage_alerts (
    policy_id uuid NOT NULL,
    kind text NOT NULL,
    period text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT usage_alerts_kind CHECK ((kind = ANY (ARRAY['budget_exceeded'::text, 'daily_cap_reached'::text, 'annual_cap_reached'::text])))
);

--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_reference text NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    email text NOT NULL,
    username text NOT NULL,
    first_names text NOT NULL,
    last_names text NOT NULL,
    password_hash text NOT NULL,
    password_is_temporary boolean NOT NULL,
    temporary_password_expires_at timestamp with time zone,
    password_changed_at timestamp with time zone,
    active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    session_generation integer DEFAULT 0 NOT NULL,
    last_login_at timestamp with time zone,
    erased_at timestamp with time zone,
    CONSTRAINT users_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    delivery_reference text NOT NULL,
    sequence bigint NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id uuid NOT NULL,
    status text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone,
    lease_id uuid,
    last_attempt_at timestamp with time zone,
    last_response_status integer,
    last_error text,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    event_created_at timestamp(3) with time zone NOT NULL,
    event_type text NOT NULL,
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text])))
);

--
-- Name: webhook_deliveries_sequence_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_deliveries ALTER COLUMN sequence ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_deliveries_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_delivery_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_delivery_attempts (
    id bigint NOT NULL,
    delivery_id uuid NOT NULL,
    attempt_number integer NOT NULL,
    started_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    outcome text NOT NULL,
    response_status integer,
    response_body text,
    error text,
    CONSTRAINT webhook_delivery_attempts_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text])))
);

--
-- Name: webhook_delivery_attempts_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_delivery_attempts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_delivery_attempts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    endpoint_reference text NOT NULL,
    company_id uuid NOT NULL,
    environment text NOT NULL,
    url text NOT NULL,
    description text,
    event_types jsonb,
    enabled boolean DEFAULT true NOT NULL,
    disabled_reason text,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamp with time zone,
    failing_since timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT webhook_endpoints_disabled_reason_check CHECK ((disabled_reason = ANY (ARRAY['manual'::text, 'failing'::text]))),
    CONSTRAINT webhook_endpoints_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: webhook_pending_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_pending_events (
    event_id uuid NOT NULL,
    "position" bigint NOT NULL,
    event_created_at timestamp(3) with time zone NOT NULL
);

--
-- Name: webhook_pending_events_position_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_pending_events ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.webhook_pending_events_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: events_default; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ATTACH PARTITION public.events_default DEFAULT;

--
-- Name: journeys_default; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journeys ATTACH PARTITION public.journeys_default DEFAULT;

--
-- Name: positions_default; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.positions ATTACH PARTITION public.positions_default DEFAULT;

--
-- Name: events sequence; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ALTER COLUMN sequence SET DEFAULT nextval('public.events_sequence_seq'::regclass);

--
-- Name: audit_records audit_records_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_records
    ADD CONSTRAINT audit_records_pkey PRIMARY KEY (id);

--
-- Name: auth_login_sessions auth_login_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_login_sessions
    ADD CONSTRAINT auth_login_sessions_pkey PRIMARY KEY (id);

--
-- Name: auth_login_sessions auth_login_sessions_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_login_sessions
    ADD CONSTRAINT auth_login_sessions_token_key UNIQUE (token_hash);

--
-- Name: auth_refresh_tokens auth_refresh_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_refresh_tokens
    ADD CONSTRAINT auth_refresh_tokens_pkey PRIMARY KEY (id);

--
-- Name: auth_refresh_tokens auth_refresh_tokens_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_refresh_tokens
    ADD CONSTRAINT auth_refresh_tokens_token_key UNIQUE (token_hash);

--
-- Name: auth_reset_codes auth_reset_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_reset_codes
    ADD CONSTRAINT auth_reset_codes_pkey PRIMARY KEY (id);

--
-- Name: auth_signing_keys auth_signing_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_signing_keys
    ADD CONSTRAINT auth_signing_keys_pkey PRIMARY KEY (kid);

--
-- Name: auth_throttles auth_throttles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_throttles
    ADD CONSTRAINT auth_throttles_pkey PRIMARY KEY (key_hash);

--
-- Name: claim_crashes_owed claim_crashes_owed_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_crashes_owed
    ADD CONSTRAINT claim_crashes_owed_pkey PRIMARY KEY (crash_event_id);

--
-- Name: claim_exposures claim_exposures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_exposures
    ADD CONSTRAINT claim_exposures_pkey PRIMARY KEY (id, policy_id);

--
-- Name: claim_notes claim_notes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_notes
    ADD CONSTRAINT claim_notes_pkey PRIMARY KEY (id, policy_id);

--
-- Name: claim_payments claim_payments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_payments
    ADD CONSTRAINT claim_payments_pkey PRIMARY KEY (id, policy_id);

--
-- Name: claim_photos claim_photos_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_photos
    ADD CONSTRAINT claim_photos_pkey PRIMARY KEY (id, policy_id);

--
-- Name: claim_reserve_movements claim_reserve_movements_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_reserve_movements
    ADD CONSTRAINT claim_reserve_movements_pkey PRIMARY KEY (id, policy_id);

--
-- Name: claim_settings claim_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_settings
    ADD CONSTRAINT claim_settings_pkey PRIMARY KEY (company_id, environment);

--
-- Name: claims claims_one_per_crash; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claims
    ADD CONSTRAINT claims_one_per_crash UNIQUE (crash_event_id, policy_id);

--
-- Name: claims claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claims
    ADD CONSTRAINT claims_pkey PRIMARY KEY (id, policy_id);

--
-- Name: companies companies_client_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_client_id_key UNIQUE (client_id);

--
-- Name: companies companies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_pkey PRIMARY KEY (id);

--
-- Name: companies companies_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_reference_key UNIQUE (company_reference);

--
-- Name: companies companies_stripe_sandbox_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.companies
    ADD CONSTRAINT companies_stripe_sandbox_key_key UNIQUE (stripe_sandbox_key);

--
-- Name: crash_events crash_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.crash_events
    ADD CONSTRAINT crash_events_pkey PRIMARY KEY (id);

--
-- Name: device_bindings device_bindings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_bindings
    ADD CONSTRAINT device_bindings_pkey PRIMARY KEY (id);

--
-- Name: devices devices_device_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_device_id_key UNIQUE (company_id, environment, device_id);

--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (id);

--
-- Name: direct_debit_mandates direct_debit_mandates_mandate_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.direct_debit_mandates
    ADD CONSTRAINT direct_debit_mandates_mandate_key UNIQUE (provider, provider_mandate_id);

--
-- Name: direct_debit_mandates direct_debit_mandates_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.direct_debit_mandates
    ADD CONSTRAINT direct_debit_mandates_pkey PRIMARY KEY (id);

--
-- Name: direct_debit_mandates direct_debit_mandates_setup_intent_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.direct_debit_mandates
    ADD CONSTRAINT direct_debit_mandates_setup_intent_key UNIQUE (provider, setup_intent_id);

--
-- Name: document_files document_files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_files
    ADD CONSTRAINT document_files_pkey PRIMARY KEY (document_id, policy_id);

--
-- Name: document_logos document_logos_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_logos
    ADD CONSTRAINT document_logos_pkey PRIMARY KEY (id);

--
-- Name: document_logos document_logos_sha256_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_logos
    ADD CONSTRAINT document_logos_sha256_key UNIQUE (company_id, environment, sha256);

--
-- Name: document_pending_events document_pending_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_pending_events
    ADD CONSTRAINT document_pending_events_pkey PRIMARY KEY (event_id);

--
-- Name: document_settings document_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_settings
    ADD CONSTRAINT document_settings_pkey PRIMARY KEY (company_id, environment);

--
-- Name: document_templates document_templates_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_templates
    ADD CONSTRAINT document_templates_pkey PRIMARY KEY (id);

--
-- Name: document_templates document_templates_version_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_templates
    ADD CONSTRAINT document_templates_version_key UNIQUE (company_id, environment, version);

--
-- Name: documents documents_made_once; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_made_once UNIQUE (policy_id, source_event_id, kind);

--
-- Name: documents_owed documents_owed_once; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents_owed
    ADD CONSTRAINT documents_owed_once UNIQUE (policy_id, event_id, kind);

--
-- Name: documents_owed documents_owed_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents_owed
    ADD CONSTRAINT documents_owed_pkey PRIMARY KEY (id, policy_id);

--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (id, policy_id);

--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);

--
-- Name: events_default events_default_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events_default
    ADD CONSTRAINT events_default_pkey PRIMARY KEY (id, created_at);

--
-- Name: housekeeping_runs housekeeping_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.housekeeping_runs
    ADD CONSTRAINT housekeeping_runs_pkey PRIMARY KEY (id);

--
-- Name: journey_keys journey_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_keys
    ADD CONSTRAINT journey_keys_pkey PRIMARY KEY (policy_id, journey_id);

--
-- Name: journey_keys journey_keys_provider_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_keys
    ADD CONSTRAINT journey_keys_provider_reference_key UNIQUE (policy_id, provider_reference);

--
-- Name: journey_rule_credits journey_rule_credits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_rule_credits
    ADD CONSTRAINT journey_rule_credits_pkey PRIMARY KEY (id, policy_id);

--
-- Name: journey_voids journey_voids_journey_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_voids
    ADD CONSTRAINT journey_voids_journey_key UNIQUE (journey_id, policy_id);

--
-- Name: journey_voids journey_voids_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_voids
    ADD CONSTRAINT journey_voids_pkey PRIMARY KEY (id, policy_id);

--
-- Name: journeys journeys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journeys
    ADD CONSTRAINT journeys_pkey PRIMARY KEY (id, policy_id, start_at);

--
-- Name: journeys_default journeys_default_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journeys_default
    ADD CONSTRAINT journeys_default_pkey PRIMARY KEY (id, policy_id, start_at);

--
-- Name: kysely_migration_lock kysely_migration_lock_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kysely_migration_lock
    ADD CONSTRAINT kysely_migration_lock_pkey PRIMARY KEY (id);

--
-- Name: kysely_migration kysely_migration_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.kysely_migration
    ADD CONSTRAINT kysely_migration_pkey PRIMARY KEY (name);

--
-- Name: mileage_budgets mileage_budgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mileage_budgets
    ADD CONSTRAINT mileage_budgets_pkey PRIMARY KEY (policy_id);

--
-- Name: minimised_trips minimised_trips_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.minimised_trips
    ADD CONSTRAINT minimised_trips_pkey PRIMARY KEY (device_id, start_at);

--
-- Name: odometer_readings odometer_readings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.odometer_readings
    ADD CONSTRAINT odometer_readings_pkey PRIMARY KEY (id, policy_id);

--
-- Name: odometer_readings odometer_readings_policy_time_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.odometer_readings
    ADD CONSTRAINT odometer_readings_policy_time_key UNIQUE (policy_id, "time");

--
-- Name: outbox_emails outbox_emails_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox_emails
    ADD CONSTRAINT outbox_emails_pkey PRIMARY KEY (id);

--
-- Name: payment_customers payment_customers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payment_customers
    ADD CONSTRAINT payment_customers_pkey PRIMARY KEY (company_id, environment, user_id, provider);

--
-- Name: payments payments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_pkey PRIMARY KEY (id);

--
-- Name: payments payments_provider_payment_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_provider_payment_key UNIQUE (provider, provider_payment_id);

--
-- Name: policies policies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policies
    ADD CONSTRAINT policies_pkey PRIMARY KEY (id);

--
-- Name: policy_credits policy_credits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_credits
    ADD CONSTRAINT policy_credits_pkey PRIMARY KEY (id, policy_id);

--
-- Name: policy_credits policy_credits_source_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_credits
    ADD CONSTRAINT policy_credits_source_reference_key UNIQUE (policy_id, source, reference);

--
-- Name: policy_references policy_references_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_references
    ADD CONSTRAINT policy_references_pkey PRIMARY KEY (policy_reference);

--
-- Name: policy_usage_years policy_usage_years_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_usage_years
    ADD CONSTRAINT policy_usage_years_pkey PRIMARY KEY (policy_id, year_start_at);

--
-- Name: policy_versions policy_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_versions
    ADD CONSTRAINT policy_versions_pkey PRIMARY KEY (id, policy_id);

--
-- Name: policy_versions policy_versions_sequence_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_versions
    ADD CONSTRAINT policy_versions_sequence_key UNIQUE (policy_id, sequence);

--
-- Name: positions positions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.positions
    ADD CONSTRAINT positions_pkey PRIMARY KEY (device_id, "time");

--
-- Name: positions_default positions_default_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.positions_default
    ADD CONSTRAINT positions_default_pkey PRIMARY KEY (device_id, "time");

--
-- Name: processed_payment_events processed_payment_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.processed_payment_events
    ADD CONSTRAINT processed_payment_events_pkey PRIMARY KEY (provider, event_id);

--
-- Name: product_versions product_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_versions
    ADD CONSTRAINT product_versions_pkey PRIMARY KEY (id);

--
-- Name: product_versions product_versions_sequence_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_versions
    ADD CONSTRAINT product_versions_sequence_key UNIQUE (product_id, sequence);

--
-- Name: products products_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_pkey PRIMARY KEY (id);

--
-- Name: products products_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_reference_key UNIQUE (company_id, environment, product_reference);

--
-- Name: quote_bindings quote_bindings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_bindings
    ADD CONSTRAINT quote_bindings_pkey PRIMARY KEY (quote_id);

--
-- Name: quote_purchases quote_purchases_payment_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_purchases
    ADD CONSTRAINT quote_purchases_payment_key UNIQUE (provider_payment_id);

--
-- Name: quote_purchases quote_purchases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_purchases
    ADD CONSTRAINT quote_purchases_pkey PRIMARY KEY (quote_id);

--
-- Name: quote_settings quote_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_settings
    ADD CONSTRAINT quote_settings_pkey PRIMARY KEY (company_id);

--
-- Name: quotes quotes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotes
    ADD CONSTRAINT quotes_pkey PRIMARY KEY (id);

--
-- Name: quotes quotes_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotes
    ADD CONSTRAINT quotes_reference_key UNIQUE (quote_reference);

--
-- Name: rate_book_versions rate_book_versions_number_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_book_versions
    ADD CONSTRAINT rate_book_versions_number_key UNIQUE (rate_book_id, version_number);

--
-- Name: rate_book_versions rate_book_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_book_versions
    ADD CONSTRAINT rate_book_versions_pkey PRIMARY KEY (id);

--
-- Name: rate_books rate_books_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_books
    ADD CONSTRAINT rate_books_pkey PRIMARY KEY (id);

--
-- Name: rate_books rate_books_product_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_books
    ADD CONSTRAINT rate_books_product_key UNIQUE (product_id);

--
-- Name: rate_books rate_books_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_books
    ADD CONSTRAINT rate_books_reference_key UNIQUE (company_id, environment, rate_book_reference);

--
-- Name: renewal_prices renewal_prices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_prices
    ADD CONSTRAINT renewal_prices_pkey PRIMARY KEY (id, policy_id);

--
-- Name: score_disputes score_disputes_event_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_disputes
    ADD CONSTRAINT score_disputes_event_key UNIQUE (policy_id, event_id);

--
-- Name: score_disputes score_disputes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_disputes
    ADD CONSTRAINT score_disputes_pkey PRIMARY KEY (policy_id, id);

--
-- Name: score_months score_months_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_months
    ADD CONSTRAINT score_months_pkey PRIMARY KEY (policy_id, month);

--
-- Name: staff staff_email_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.staff
    ADD CONSTRAINT staff_email_key UNIQUE (email);

--
-- Name: staff staff_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.staff
    ADD CONSTRAINT staff_pkey PRIMARY KEY (id);

--
-- Name: staff_sessions staff_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.staff_sessions
    ADD CONSTRAINT staff_sessions_pkey PRIMARY KEY (id);

--
-- Name: staff_sessions staff_sessions_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.staff_sessions
    ADD CONSTRAINT staff_sessions_token_key UNIQUE (token_hash);

--
-- Name: statement_odometers statement_odometers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statement_odometers
    ADD CONSTRAINT statement_odometers_pkey PRIMARY KEY (statement_id, policy_id);

--
-- Name: statements statements_billing_date_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_billing_date_key UNIQUE (policy_id, billing_date);

--
-- Name: statements statements_period_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_period_key UNIQUE (policy_id, period_start_at);

--
-- Name: statements statements_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_pkey PRIMARY KEY (id, policy_id);

--
-- Name: stripe_sandbox_idempotency stripe_sandbox_idempotency_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stripe_sandbox_idempotency
    ADD CONSTRAINT stripe_sandbox_idempotency_pkey PRIMARY KEY (account, key);

--
-- Name: stripe_sandbox_objects stripe_sandbox_objects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stripe_sandbox_objects
    ADD CONSTRAINT stripe_sandbox_objects_pkey PRIMARY KEY (id);

--
-- Name: telematics_settings telematics_settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.telematics_settings
    ADD CONSTRAINT telematics_settings_pkey PRIMARY KEY (company_id);

--
-- Name: trip_score_events trip_score_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_score_events
    ADD CONSTRAINT trip_score_events_pkey PRIMARY KEY (policy_id, id);

--
-- Name: trip_scores trip_scores_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_scores
    ADD CONSTRAINT trip_scores_pkey PRIMARY KEY (policy_id, journey_id);

--
-- Name: usage_alerts usage_alerts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.usage_alerts
    ADD CONSTRAINT usage_alerts_pkey PRIMARY KEY (policy_id, kind, period);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: users users_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_reference_key UNIQUE (user_reference);

--
-- Name: users users_tenant_email_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_tenant_email_key UNIQUE (company_id, environment, email);

--
-- Name: users users_tenant_username_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_tenant_username_key UNIQUE (company_id, environment, username);

--
-- Name: webhook_deliveries webhook_deliveries_event_endpoint_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_endpoint_key UNIQUE (event_id, endpoint_id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

--
-- Name: webhook_deliveries webhook_deliveries_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_reference_key UNIQUE (delivery_reference);

--
-- Name: webhook_delivery_attempts webhook_delivery_attempts_number_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_number_key UNIQUE (delivery_id, attempt_number);

--
-- Name: webhook_delivery_attempts webhook_delivery_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (id);

--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

--
-- Name: webhook_endpoints webhook_endpoints_reference_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_reference_key UNIQUE (endpoint_reference);

--
-- Name: webhook_pending_events webhook_pending_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_pending_events
    ADD CONSTRAINT webhook_pending_events_pkey PRIMARY KEY (event_id);

--
-- Name: audit_records_actor; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_records_actor ON public.audit_records USING btree (actor, id);

--
-- Name: audit_records_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_records_policy ON public.audit_records USING btree (policy_id, id) WHERE (policy_id IS NOT NULL);

--
-- Name: audit_records_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_records_request ON public.audit_records USING btree (request_id);

--
-- Name: audit_records_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_records_time ON public.audit_records USING btree (occurred_at, id);

--
-- Name: auth_login_sessions_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_login_sessions_user_idx ON public.auth_login_sessions USING btree (user_id);

--
-- Name: auth_refresh_tokens_expiry_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_refresh_tokens_expiry_idx ON public.auth_refresh_tokens USING btree (expires_at);

--
-- Name: auth_refresh_tokens_family_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_refresh_tokens_family_idx ON public.auth_refresh_tokens USING btree (family_id);

--
-- Name: auth_refresh_tokens_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_refresh_tokens_user_idx ON public.auth_refresh_tokens USING btree (user_id) WHERE (revoked_at IS NULL);

--
-- Name: auth_reset_codes_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_reset_codes_user_idx ON public.auth_reset_codes USING btree (user_id, created_at);

--
-- Name: auth_throttles_last_failure_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_throttles_last_failure_idx ON public.auth_throttles USING btree (last_failure_at);

--
-- Name: claim_crashes_owed_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_crashes_owed_due ON public.claim_crashes_owed USING btree (due_at);

--
-- Name: claim_exposures_by_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_exposures_by_claim ON public.claim_exposures USING btree (policy_id, claim_id);

--
-- Name: claim_notes_by_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_notes_by_claim ON public.claim_notes USING btree (policy_id, claim_id, created_at);

--
-- Name: claim_payments_by_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_payments_by_claim ON public.claim_payments USING btree (policy_id, claim_id, paid_at);

--
-- Name: claim_payments_reference_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX claim_payments_reference_key ON public.claim_payments USING btree (exposure_id, policy_id, payment_reference) WHERE (payment_reference IS NOT NULL);

--
-- Name: claim_photos_by_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_photos_by_claim ON public.claim_photos USING btree (policy_id, claim_id, uploaded_at);

--
-- Name: claim_reserve_movements_by_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_reserve_movements_by_claim ON public.claim_reserve_movements USING btree (policy_id, claim_id, moved_at);

--
-- Name: claim_reserve_movements_by_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claim_reserve_movements_by_tenant ON public.claim_reserve_movements USING btree (company_id, environment, moved_at);

--
-- Name: claims_by_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claims_by_policy ON public.claims USING btree (policy_id, created_at);

--
-- Name: claims_by_tenant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claims_by_tenant ON public.claims USING btree (company_id, environment, state, created_at);

--
-- Name: claims_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claims_ended ON public.claims USING btree (ended_at) WHERE (erased_at IS NULL);

--
-- Name: claims_report_reference_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX claims_report_reference_key ON public.claims USING btree (policy_id, report_reference) WHERE (report_reference IS NOT NULL);

--
-- Name: claims_settled; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX claims_settled ON public.claims USING btree (policy_id, settled_at);

--
-- Name: crash_events_device_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX crash_events_device_time ON public.crash_events USING btree (device_id, occurred_at);

--
-- Name: crash_events_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX crash_events_policy ON public.crash_events USING btree (policy_id, occurred_at);

--
-- Name: device_bindings_device; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_bindings_device ON public.device_bindings USING btree (device_id, bound_at);

--
-- Name: device_bindings_one_open_per_device; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX device_bindings_one_open_per_device ON public.device_bindings USING btree (device_id) WHERE (unbound_at IS NULL);

--
-- Name: device_bindings_one_open_per_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX device_bindings_one_open_per_policy ON public.device_bindings USING btree (policy_id) WHERE (unbound_at IS NULL);

--
-- Name: device_bindings_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_bindings_policy ON public.device_bindings USING btree (policy_id, bound_at);

--
-- Name: devices_trips_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX devices_trips_pending ON public.devices USING btree (trips_pending_from) WHERE ((trips_pending_from IS NOT NULL) OR (open_trip_from IS NOT NULL));

--
-- Name: direct_debit_mandates_default_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX direct_debit_mandates_default_key ON public.direct_debit_mandates USING btree (policy_id) WHERE is_default;

--
-- Name: direct_debit_mandates_policy_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX direct_debit_mandates_policy_idx ON public.direct_debit_mandates USING btree (policy_id, created_at);

--
-- Name: document_pending_events_order; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX document_pending_events_order ON public.document_pending_events USING btree (created_at, event_id);

--
-- Name: document_templates_in_effect; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX document_templates_in_effect ON public.document_templates USING btree (company_id, environment, product_reference, effective_from DESC, version DESC);

--
-- Name: documents_by_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX documents_by_policy ON public.documents USING btree (policy_id, issued_at);

--
-- Name: documents_owed_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX documents_owed_due ON public.documents_owed USING btree (due_at);

--
-- Name: journey_keys_live_start_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journey_keys_live_start_idx ON public.journey_keys USING btree (policy_id, start_at) INCLUDE (end_at) WHERE live;

--
-- Name: journey_rule_credits_day_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journey_rule_credits_day_idx ON public.journey_rule_credits USING btree (policy_id, day) WHERE (rule = 'daily_cap'::text);

--
-- Name: journey_rule_credits_journey_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journey_rule_credits_journey_idx ON public.journey_rule_credits USING btree (journey_id);

--
-- Name: journey_voids_credit_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journey_voids_credit_due_idx ON public.journey_voids USING btree (policy_id) WHERE ((billed_statement_version_id IS NOT NULL) AND (credited_statement_version_id IS NULL));

--
-- Name: journeys_device_start_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_device_start_idx ON ONLY public.journeys USING btree (company_id, environment, device_id, start_at) WHERE (device_id IS NOT NULL);

--
-- Name: journeys_default_company_id_environment_device_id_start_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_default_company_id_environment_device_id_start_at_idx ON public.journeys_default USING btree (company_id, environment, device_id, start_at) WHERE (device_id IS NOT NULL);

--
-- Name: journeys_late_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_late_idx ON ONLY public.journeys USING btree (policy_id) WHERE late;

--
-- Name: journeys_default_policy_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_default_policy_id_idx ON public.journeys_default USING btree (policy_id) WHERE late;

--
-- Name: journeys_provider_reference_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_provider_reference_idx ON ONLY public.journeys USING btree (policy_id, provider_reference) WHERE ((source = 'api'::text) OR (NOT is_void));

--
-- Name: journeys_default_policy_id_provider_reference_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_default_policy_id_provider_reference_idx ON public.journeys_default USING btree (policy_id, provider_reference) WHERE ((source = 'api'::text) OR (NOT is_void));

--
-- Name: journeys_policy_start_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_policy_start_idx ON ONLY public.journeys USING btree (policy_id, start_at) INCLUDE (end_at, distance_metres, usage_premium_pence, is_void);

--
-- Name: journeys_default_policy_id_start_at_end_at_distance_metres__idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_default_policy_id_start_at_end_at_distance_metres__idx ON public.journeys_default USING btree (policy_id, start_at) INCLUDE (end_at, distance_metres, usage_premium_pence, is_void);

--
-- Name: journeys_route_retention; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_route_retention ON ONLY public.journeys USING btree (start_at) WHERE (point_count > 2);

--
-- Name: journeys_default_start_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX journeys_default_start_at_idx ON public.journeys_default USING btree (start_at) WHERE (point_count > 2);

--
-- Name: payments_collections_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_collections_idx ON public.payments USING btree (company_id, environment, collect_on) WHERE (collect_on IS NOT NULL);

--
-- Name: payments_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_due_idx ON public.payments USING btree (next_attempt_at) WHERE (next_attempt_at IS NOT NULL);

--
-- Name: payments_policy_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_policy_idx ON public.payments USING btree (policy_id, created_at);

--
-- Name: payments_tenant_cash_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_tenant_cash_idx ON public.payments USING btree (company_id, environment, COALESCE(settled_at, created_at), id);

--
-- Name: payments_tenant_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_tenant_created_idx ON public.payments USING btree (company_id, environment, created_at, id);

--
-- Name: payments_version_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payments_version_idx ON public.payments USING btree (policy_version_id);

--
-- Name: policies_billing_day_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_billing_day_id_idx ON public.policies USING btree (billing_day, id) WHERE (status = 'active'::text);

--
-- Name: policies_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_created_idx ON public.policies USING btree (created_at);

--
-- Name: policies_reference_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_reference_idx ON public.policies USING btree (policy_reference);

--
-- Name: policies_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_search ON public.policies USING gin (search_text public.gin_trgm_ops);

--
-- Name: policies_tenant_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_tenant_idx ON public.policies USING btree (company_id, environment, created_at);

--
-- Name: policies_term_end_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_term_end_idx ON public.policies USING btree (current_end_at) WHERE (status = 'active'::text);

--
-- Name: policies_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policies_user_idx ON public.policies USING btree (user_id);

--
-- Name: policy_credits_policy_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policy_credits_policy_idx ON public.policy_credits USING btree (policy_id);

--
-- Name: policy_versions_effective_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policy_versions_effective_idx ON public.policy_versions USING btree (effective_at, id);

--
-- Name: quote_bindings_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quote_bindings_policy ON public.quote_bindings USING btree (policy_id);

--
-- Name: quotes_applicant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotes_applicant ON public.quotes USING btree (company_id, environment, applicant_email) WHERE (applicant_email IS NOT NULL);

--
-- Name: quotes_referral_queue; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotes_referral_queue ON public.quotes USING btree (company_id, environment, created_at) WHERE (referral_status = 'pending'::text);

--
-- Name: quotes_retention; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX quotes_retention ON public.quotes USING btree (created_at) WHERE (pseudonymised_at IS NULL);

--
-- Name: rate_book_versions_in_force; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rate_book_versions_in_force ON public.rate_book_versions USING btree (rate_book_id, effective_from DESC) WHERE (status = 'approved'::text);

--
-- Name: renewal_prices_capped; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX renewal_prices_capped ON public.renewal_prices USING btree (company_id, environment, start_at) WHERE ((stage = 'renewal'::text) AND cap_applied);

--
-- Name: renewal_prices_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX renewal_prices_policy ON public.renewal_prices USING btree (policy_id, priced_at DESC);

--
-- Name: score_disputes_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX score_disputes_id_idx ON public.score_disputes USING btree (id);

--
-- Name: score_disputes_state_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX score_disputes_state_idx ON public.score_disputes USING btree (state, created_at);

--
-- Name: staff_sessions_staff; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX staff_sessions_staff ON public.staff_sessions USING btree (staff_id);

--
-- Name: statement_odometers_policy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX statement_odometers_policy ON public.statement_odometers USING btree (policy_id, end_at);

--
-- Name: statements_policy_end_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX statements_policy_end_idx ON public.statements USING btree (policy_id, period_end_at DESC);

--
-- Name: stripe_sandbox_objects_data_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stripe_sandbox_objects_data_idx ON public.stripe_sandbox_objects USING gin (data jsonb_path_ops);

--
-- Name: stripe_sandbox_objects_type_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stripe_sandbox_objects_type_idx ON public.stripe_sandbox_objects USING btree (type, created_at DESC);

--
-- Name: trip_score_events_trip_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX trip_score_events_trip_idx ON public.trip_score_events USING btree (policy_id, journey_id);

--
-- Name: trip_scores_month_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX trip_scores_month_idx ON public.trip_scores USING btree (policy_id, month) WHERE (voided_at IS NULL);

--
-- Name: webhook_deliveries_due_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_due_idx ON public.webhook_deliveries USING btree (next_attempt_at) WHERE (status = 'pending'::text);

--
-- Name: webhook_deliveries_endpoint_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint_idx ON public.webhook_deliveries USING btree (endpoint_id, sequence);

--
-- Name: webhook_endpoints_tenant_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_tenant_idx ON public.webhook_endpoints USING btree (company_id, environment, created_at);

--
-- Name: webhook_pending_events_position_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_pending_events_position_idx ON public.webhook_pending_events USING btree ("position");

--
-- Name: events_default_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.events_pkey ATTACH PARTITION public.events_default_pkey;

--
-- Name: journeys_default_company_id_environment_device_id_start_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_device_start_idx ATTACH PARTITION public.journeys_default_company_id_environment_device_id_start_at_idx;

--
-- Name: journeys_default_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_pkey ATTACH PARTITION public.journeys_default_pkey;

--
-- Name: journeys_default_policy_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_late_idx ATTACH PARTITION public.journeys_default_policy_id_idx;

--
-- Name: journeys_default_policy_id_provider_reference_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_provider_reference_idx ATTACH PARTITION public.journeys_default_policy_id_provider_reference_idx;

--
-- Name: journeys_default_policy_id_start_at_end_at_distance_metres__idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_policy_start_idx ATTACH PARTITION public.journeys_default_policy_id_start_at_end_at_distance_metres__idx;

--
-- Name: journeys_default_start_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.journeys_route_retention ATTACH PARTITION public.journeys_default_start_at_idx;

--
-- Name: positions_default_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.positions_pkey ATTACH PARTITION public.positions_default_pkey;

--
-- Name: auth_signing_keys audit_auth_signing_keys; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_auth_signing_keys AFTER INSERT OR DELETE OR UPDATE ON public.auth_signing_keys FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claim_exposures audit_claim_exposures; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_claim_exposures AFTER INSERT OR DELETE OR UPDATE ON public.claim_exposures FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claim_notes audit_claim_notes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_claim_notes AFTER INSERT OR DELETE OR UPDATE ON public.claim_notes FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claim_payments audit_claim_payments; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_claim_payments AFTER INSERT OR DELETE OR UPDATE ON public.claim_payments FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claim_settings audit_claim_settings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_claim_settings AFTER INSERT OR DELETE OR UPDATE ON public.claim_settings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claims audit_claims; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_claims AFTER INSERT OR DELETE OR UPDATE ON public.claims FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: companies audit_companies; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_companies AFTER INSERT OR DELETE OR UPDATE ON public.companies FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: device_bindings audit_device_bindings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_device_bindings AFTER INSERT OR DELETE OR UPDATE ON public.device_bindings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: devices audit_devices; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_devices AFTER INSERT OR DELETE OR UPDATE ON public.devices FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: document_settings audit_document_settings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_document_settings AFTER INSERT OR DELETE OR UPDATE ON public.document_settings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: document_templates audit_document_templates; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_document_templates AFTER INSERT OR DELETE OR UPDATE ON public.document_templates FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: documents audit_documents; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_documents AFTER INSERT OR DELETE OR UPDATE ON public.documents FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: events audit_events; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_events AFTER INSERT OR DELETE OR UPDATE ON public.events FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: journey_rule_credits audit_journey_rule_credits; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_journey_rule_credits AFTER INSERT OR DELETE OR UPDATE ON public.journey_rule_credits FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: journey_voids audit_journey_voids; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_journey_voids AFTER INSERT OR DELETE OR UPDATE ON public.journey_voids FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: journeys audit_journeys; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_journeys AFTER INSERT OR DELETE OR UPDATE ON public.journeys FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: mileage_budgets audit_mileage_budgets; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_mileage_budgets AFTER INSERT OR DELETE OR UPDATE ON public.mileage_budgets FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: odometer_readings audit_odometer_readings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_odometer_readings AFTER INSERT OR DELETE OR UPDATE ON public.odometer_readings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: outbox_emails audit_outbox_emails; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_outbox_emails AFTER INSERT OR DELETE OR UPDATE ON public.outbox_emails FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: payment_customers audit_payment_customers; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_payment_customers AFTER INSERT OR DELETE OR UPDATE ON public.payment_customers FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: payments audit_payments; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_payments AFTER INSERT OR DELETE OR UPDATE ON public.payments FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: policies audit_policies; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_policies AFTER INSERT OR DELETE OR UPDATE ON public.policies FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: policy_credits audit_policy_credits; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_policy_credits AFTER INSERT OR DELETE OR UPDATE ON public.policy_credits FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: policy_versions audit_policy_versions; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_policy_versions AFTER INSERT OR DELETE OR UPDATE ON public.policy_versions FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: product_versions audit_product_versions; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_product_versions AFTER INSERT OR DELETE OR UPDATE ON public.product_versions FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: products audit_products; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_products AFTER INSERT OR DELETE OR UPDATE ON public.products FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: quote_settings audit_quote_settings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_quote_settings AFTER INSERT OR DELETE OR UPDATE ON public.quote_settings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: quotes audit_quotes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_quotes AFTER INSERT OR DELETE OR UPDATE ON public.quotes FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: rate_book_versions audit_rate_book_versions; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_rate_book_versions AFTER INSERT OR DELETE OR UPDATE ON public.rate_book_versions FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: rate_books audit_rate_books; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_rate_books AFTER INSERT OR DELETE OR UPDATE ON public.rate_books FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: audit_records audit_records_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_records_append_only BEFORE DELETE OR UPDATE ON public.audit_records FOR EACH ROW EXECUTE FUNCTION public.milepost_audit_append_only();

--
-- Name: score_disputes audit_score_disputes; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_score_disputes AFTER INSERT OR DELETE OR UPDATE ON public.score_disputes FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: score_months audit_score_months; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_score_months AFTER INSERT OR DELETE OR UPDATE ON public.score_months FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: staff audit_staff; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_staff AFTER INSERT OR DELETE OR UPDATE ON public.staff FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: statement_odometers audit_statement_odometers; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_statement_odometers AFTER INSERT OR DELETE OR UPDATE ON public.statement_odometers FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: statements audit_statements; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_statements AFTER INSERT OR DELETE OR UPDATE ON public.statements FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: telematics_settings audit_telematics_settings; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_telematics_settings AFTER INSERT OR DELETE OR UPDATE ON public.telematics_settings FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: trip_scores audit_trip_scores; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_trip_scores AFTER INSERT OR DELETE OR UPDATE ON public.trip_scores FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: users audit_users; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_users AFTER INSERT OR DELETE OR UPDATE ON public.users FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: webhook_deliveries audit_webhook_deliveries; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_webhook_deliveries AFTER INSERT OR DELETE OR UPDATE ON public.webhook_deliveries FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: webhook_endpoints audit_webhook_endpoints; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_webhook_endpoints AFTER INSERT OR DELETE OR UPDATE ON public.webhook_endpoints FOR EACH ROW WHEN ((COALESCE(current_setting('milepost.audit'::text, true), ''::text) <> ''::text)) EXECUTE FUNCTION public.milepost_audit_row();

--
-- Name: claim_exposures claim_exposures_reserve_moved; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER claim_exposures_reserve_moved AFTER INSERT OR UPDATE OF reserve_pence ON public.claim_exposures FOR EACH ROW EXECUTE FUNCTION public.claim_reserves_moved();

--
-- Name: claim_payments claim_payments_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER claim_payments_no_update BEFORE UPDATE ON public.claim_payments FOR EACH ROW EXECUTE FUNCTION public.claim_payments_immutable();

--
-- Name: claim_payments claim_payments_paid; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER claim_payments_paid AFTER INSERT ON public.claim_payments FOR EACH ROW EXECUTE FUNCTION public.claim_payments_apply();

--
-- Name: claim_payments claim_payments_release; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER claim_payments_release AFTER INSERT ON public.claim_payments FOR EACH ROW EXECUTE FUNCTION public.claim_reserves_released();

--
-- Name: claims claims_state_table; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER claims_state_table BEFORE INSERT OR UPDATE OF state ON public.claims FOR EACH ROW EXECUTE FUNCTION public.claims_state_change();

--
-- Name: crash_events crash_events_one_a_window; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER crash_events_one_a_window BEFORE INSERT ON public.crash_events FOR EACH ROW EXECUTE FUNCTION public.crash_events_once();

--
-- Name: crash_events crash_events_owe_claim; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER crash_events_owe_claim AFTER INSERT ON public.crash_events FOR EACH ROW EXECUTE FUNCTION public.claims_owe_first_notice();

--
-- Name: document_files document_files_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER document_files_no_update BEFORE UPDATE ON public.document_files FOR EACH ROW EXECUTE FUNCTION public.documents_immutable();

--
-- Name: documents documents_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER documents_no_update BEFORE UPDATE ON public.documents FOR EACH ROW EXECUTE FUNCTION public.documents_immutable();

--
-- Name: events events_documents_queue; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_documents_queue AFTER INSERT ON public.events FOR EACH ROW WHEN ((new.type = ANY (ARRAY['policy.created'::text, 'policy.adjusted'::text, 'policy.renewal_scheduled'::text, 'policy.renewed'::text, 'policy.cancelled'::text, 'statement.created'::text, 'journey.voided'::text, 'payment.refunded'::text]))) EXECUTE FUNCTION public.documents_queue_event();

--
-- Name: events events_webhook_queue; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_webhook_queue AFTER INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION public.webhook_queue_event();

--
-- Name: payments payments_notify_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payments_notify_delete AFTER DELETE ON public.payments REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: payments payments_notify_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payments_notify_insert AFTER INSERT ON public.payments REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: payments payments_notify_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER payments_notify_update AFTER UPDATE ON public.payments REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: policies policies_notify_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policies_notify_delete AFTER DELETE ON public.policies REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_changes();

--
-- Name: policies policies_notify_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policies_notify_insert AFTER INSERT ON public.policies REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_changes();

--
-- Name: policies policies_notify_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policies_notify_update AFTER UPDATE ON public.policies REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_changes();

--
-- Name: policy_versions policy_versions_notify_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_versions_notify_delete AFTER DELETE ON public.policy_versions REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: policy_versions policy_versions_notify_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_versions_notify_insert AFTER INSERT ON public.policy_versions REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: policy_versions policy_versions_notify_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_versions_notify_update AFTER UPDATE ON public.policy_versions REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_policy_owner_changes();

--
-- Name: policy_versions policy_versions_search; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_versions_search AFTER INSERT ON public.policy_versions FOR EACH ROW WHEN ((new.snapshot IS NOT NULL)) EXECUTE FUNCTION public.milepost_policy_search_update();

--
-- Name: rate_book_versions rate_book_versions_frozen; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER rate_book_versions_frozen BEFORE DELETE OR UPDATE ON public.rate_book_versions FOR EACH ROW EXECUTE FUNCTION public.milepost_rate_book_version_frozen();

--
-- Name: users users_notify_reference; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER users_notify_reference AFTER UPDATE OF user_reference ON public.users FOR EACH ROW WHEN ((old.user_reference IS DISTINCT FROM new.user_reference)) EXECUTE FUNCTION public.notify_account_reference_changes();

--
-- Name: auth_login_sessions auth_login_sessions_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_login_sessions
    ADD CONSTRAINT auth_login_sessions_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: auth_login_sessions auth_login_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_login_sessions
    ADD CONSTRAINT auth_login_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: auth_refresh_tokens auth_refresh_tokens_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_refresh_tokens
    ADD CONSTRAINT auth_refresh_tokens_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: auth_refresh_tokens auth_refresh_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_refresh_tokens
    ADD CONSTRAINT auth_refresh_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: auth_reset_codes auth_reset_codes_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_reset_codes
    ADD CONSTRAINT auth_reset_codes_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: auth_reset_codes auth_reset_codes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_reset_codes
    ADD CONSTRAINT auth_reset_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: claim_exposures claim_exposures_claim_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_exposures
    ADD CONSTRAINT claim_exposures_claim_fkey FOREIGN KEY (claim_id, policy_id) REFERENCES public.claims(id, policy_id);

--
-- Name: claim_notes claim_notes_claim_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_notes
    ADD CONSTRAINT claim_notes_claim_fkey FOREIGN KEY (claim_id, policy_id) REFERENCES public.claims(id, policy_id);

--
-- Name: claim_payments claim_payments_exposure_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_payments
    ADD CONSTRAINT claim_payments_exposure_fkey FOREIGN KEY (exposure_id, policy_id) REFERENCES public.claim_exposures(id, policy_id);

--
-- Name: claim_photos claim_photos_claim_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_photos
    ADD CONSTRAINT claim_photos_claim_fkey FOREIGN KEY (claim_id, policy_id) REFERENCES public.claims(id, policy_id);

--
-- Name: claim_reserve_movements claim_reserve_movements_exposure_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claim_reserve_movements
    ADD CONSTRAINT claim_reserve_movements_exposure_fkey FOREIGN KEY (exposure_id, policy_id) REFERENCES public.claim_exposures(id, policy_id);

--
-- Name: claims claims_policy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claims
    ADD CONSTRAINT claims_policy_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: claims claims_version_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.claims
    ADD CONSTRAINT claims_version_fkey FOREIGN KEY (policy_version_id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: crash_events crash_events_device_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.crash_events
    ADD CONSTRAINT crash_events_device_fkey FOREIGN KEY (device_id) REFERENCES public.devices(id);

--
-- Name: device_bindings device_bindings_device_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_bindings
    ADD CONSTRAINT device_bindings_device_id_fkey FOREIGN KEY (device_id) REFERENCES public.devices(id);

--
-- Name: device_bindings device_bindings_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_bindings
    ADD CONSTRAINT device_bindings_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: devices devices_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: direct_debit_mandates direct_debit_mandates_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.direct_debit_mandates
    ADD CONSTRAINT direct_debit_mandates_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: direct_debit_mandates direct_debit_mandates_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.direct_debit_mandates
    ADD CONSTRAINT direct_debit_mandates_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: document_files document_files_document_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_files
    ADD CONSTRAINT document_files_document_fkey FOREIGN KEY (document_id, policy_id) REFERENCES public.documents(id, policy_id) ON DELETE CASCADE;

--
-- Name: document_logos document_logos_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_logos
    ADD CONSTRAINT document_logos_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: document_settings document_settings_company_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_settings
    ADD CONSTRAINT document_settings_company_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: document_templates document_templates_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_templates
    ADD CONSTRAINT document_templates_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: document_templates document_templates_logo_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.document_templates
    ADD CONSTRAINT document_templates_logo_id_fkey FOREIGN KEY (logo_id) REFERENCES public.document_logos(id);

--
-- Name: documents_owed documents_owed_policy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents_owed
    ADD CONSTRAINT documents_owed_policy_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: documents documents_policy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_policy_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: documents documents_reissue_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_reissue_fkey FOREIGN KEY (reissue_of, policy_id) REFERENCES public.documents(id, policy_id);

--
-- Name: documents documents_statement_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_statement_fkey FOREIGN KEY (statement_id, policy_id) REFERENCES public.statements(id, policy_id);

--
-- Name: documents documents_version_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.documents
    ADD CONSTRAINT documents_version_fkey FOREIGN KEY (policy_version_id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: journey_voids journey_voids_billed_statement_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_voids
    ADD CONSTRAINT journey_voids_billed_statement_version_id_fkey FOREIGN KEY (billed_statement_version_id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: journey_voids journey_voids_credited_statement_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_voids
    ADD CONSTRAINT journey_voids_credited_statement_version_id_fkey FOREIGN KEY (credited_statement_version_id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: journey_voids journey_voids_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.journey_voids
    ADD CONSTRAINT journey_voids_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: mileage_budgets mileage_budgets_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mileage_budgets
    ADD CONSTRAINT mileage_budgets_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: mileage_budgets mileage_budgets_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mileage_budgets
    ADD CONSTRAINT mileage_budgets_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: minimised_trips minimised_trips_device_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.minimised_trips
    ADD CONSTRAINT minimised_trips_device_id_fkey FOREIGN KEY (device_id) REFERENCES public.devices(id);

--
-- Name: odometer_readings odometer_readings_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.odometer_readings
    ADD CONSTRAINT odometer_readings_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: odometer_readings odometer_readings_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.odometer_readings
    ADD CONSTRAINT odometer_readings_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: outbox_emails outbox_emails_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox_emails
    ADD CONSTRAINT outbox_emails_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: payment_customers payment_customers_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payment_customers
    ADD CONSTRAINT payment_customers_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: payment_customers payment_customers_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payment_customers
    ADD CONSTRAINT payment_customers_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);

--
-- Name: payments payments_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: payments payments_mandate_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_mandate_fkey FOREIGN KEY (mandate_id) REFERENCES public.direct_debit_mandates(id);

--
-- Name: payments payments_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: payments payments_policy_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_policy_version_id_fkey FOREIGN KEY (policy_version_id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: payments payments_refund_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payments
    ADD CONSTRAINT payments_refund_of_fkey FOREIGN KEY (refund_of) REFERENCES public.payments(id);

--
-- Name: policies policies_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policies
    ADD CONSTRAINT policies_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: policies policies_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policies
    ADD CONSTRAINT policies_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id);

--
-- Name: policy_credits policy_credits_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_credits
    ADD CONSTRAINT policy_credits_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: policy_usage_years policy_usage_years_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_usage_years
    ADD CONSTRAINT policy_usage_years_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: policy_versions policy_versions_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_versions
    ADD CONSTRAINT policy_versions_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: product_versions product_versions_product_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_versions
    ADD CONSTRAINT product_versions_product_id_fkey FOREIGN KEY (product_id) REFERENCES public.products(id) ON DELETE CASCADE;

--
-- Name: products products_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.products
    ADD CONSTRAINT products_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: quote_bindings quote_bindings_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_bindings
    ADD CONSTRAINT quote_bindings_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: quote_bindings quote_bindings_quote_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_bindings
    ADD CONSTRAINT quote_bindings_quote_id_fkey FOREIGN KEY (quote_id) REFERENCES public.quotes(id);

--
-- Name: quote_purchases quote_purchases_quote_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_purchases
    ADD CONSTRAINT quote_purchases_quote_fkey FOREIGN KEY (quote_id) REFERENCES public.quotes(id);

--
-- Name: quote_settings quote_settings_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quote_settings
    ADD CONSTRAINT quote_settings_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: quotes quotes_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotes
    ADD CONSTRAINT quotes_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: quotes quotes_rate_book_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotes
    ADD CONSTRAINT quotes_rate_book_version_id_fkey FOREIGN KEY (rate_book_version_id) REFERENCES public.rate_book_versions(id);

--
-- Name: quotes quotes_referral_staff_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.quotes
    ADD CONSTRAINT quotes_referral_staff_id_fkey FOREIGN KEY (referral_staff_id) REFERENCES public.staff(id);

--
-- Name: rate_book_versions rate_book_versions_approver_staff_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_book_versions
    ADD CONSTRAINT rate_book_versions_approver_staff_id_fkey FOREIGN KEY (approver_staff_id) REFERENCES public.staff(id);

--
-- Name: rate_book_versions rate_book_versions_author_staff_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_book_versions
    ADD CONSTRAINT rate_book_versions_author_staff_id_fkey FOREIGN KEY (author_staff_id) REFERENCES public.staff(id);

--
-- Name: rate_book_versions rate_book_versions_rate_book_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_book_versions
    ADD CONSTRAINT rate_book_versions_rate_book_id_fkey FOREIGN KEY (rate_book_id) REFERENCES public.rate_books(id);

--
-- Name: rate_books rate_books_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_books
    ADD CONSTRAINT rate_books_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: rate_books rate_books_product_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_books
    ADD CONSTRAINT rate_books_product_id_fkey FOREIGN KEY (product_id) REFERENCES public.products(id);

--
-- Name: renewal_prices renewal_prices_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_prices
    ADD CONSTRAINT renewal_prices_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: renewal_prices renewal_prices_policy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_prices
    ADD CONSTRAINT renewal_prices_policy_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: renewal_prices renewal_prices_product_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_prices
    ADD CONSTRAINT renewal_prices_product_id_fkey FOREIGN KEY (product_id) REFERENCES public.products(id);

--
-- Name: renewal_prices renewal_prices_rate_book_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.renewal_prices
    ADD CONSTRAINT renewal_prices_rate_book_version_id_fkey FOREIGN KEY (rate_book_version_id) REFERENCES public.rate_book_versions(id);

--
-- Name: score_disputes score_disputes_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_disputes
    ADD CONSTRAINT score_disputes_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: score_disputes score_disputes_event_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_disputes
    ADD CONSTRAINT score_disputes_event_fkey FOREIGN KEY (policy_id, event_id) REFERENCES public.trip_score_events(policy_id, id);

--
-- Name: score_disputes score_disputes_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_disputes
    ADD CONSTRAINT score_disputes_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: score_months score_months_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_months
    ADD CONSTRAINT score_months_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: score_months score_months_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.score_months
    ADD CONSTRAINT score_months_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: staff_sessions staff_sessions_staff_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.staff_sessions
    ADD CONSTRAINT staff_sessions_staff_id_fkey FOREIGN KEY (staff_id) REFERENCES public.staff(id);

--
-- Name: statement_odometers statement_odometers_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statement_odometers
    ADD CONSTRAINT statement_odometers_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: statement_odometers statement_odometers_statement_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statement_odometers
    ADD CONSTRAINT statement_odometers_statement_id_fkey FOREIGN KEY (statement_id, policy_id) REFERENCES public.statements(id, policy_id);

--
-- Name: statements statements_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_id_fkey FOREIGN KEY (id, policy_id) REFERENCES public.policy_versions(id, policy_id);

--
-- Name: statements statements_payment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_payment_id_fkey FOREIGN KEY (payment_id) REFERENCES public.payments(id);

--
-- Name: statements statements_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.statements
    ADD CONSTRAINT statements_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: telematics_settings telematics_settings_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.telematics_settings
    ADD CONSTRAINT telematics_settings_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: trip_score_events trip_score_events_trip_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_score_events
    ADD CONSTRAINT trip_score_events_trip_fkey FOREIGN KEY (policy_id, journey_id) REFERENCES public.trip_scores(policy_id, journey_id);

--
-- Name: trip_scores trip_scores_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_scores
    ADD CONSTRAINT trip_scores_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: trip_scores trip_scores_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.trip_scores
    ADD CONSTRAINT trip_scores_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: usage_alerts usage_alerts_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.usage_alerts
    ADD CONSTRAINT usage_alerts_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES public.policies(id);

--
-- Name: users users_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;

--
-- Name: webhook_delivery_attempts webhook_delivery_attempts_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;

--
-- Name: webhook_endpoints webhook_endpoints_company_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_company_id_fkey FOREIGN KEY (company_id) REFERENCES public.companies(id);

--
-- PostgreSQL database dump complete
--
