/**
 * One batch of seeded policies, written by one statement: the policyholders' accounts, the policies and
 * their `nb` versions, and (when asked) each policy's statement of a month with its `st` version. The
 * statement is a chain of CTEs: lists to pick from, each index's draws, the people they make, their
 * terms and snapshots, then the inserts.
 */
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { sql } from 'kysely';
import { TEMPORARY_PASSWORD_DAYS } from '../modules/accounts/index.ts';
import type { Executor } from '../schema.ts';
import type { IdPrefixes } from './ids.ts';
import {
  EMAIL_DOMAINS,
  FEMALE_FIRST_NAMES,
  INWARD_LETTERS,
  MALE_FIRST_NAMES,
  MIDDLE_NAMES,
  OUTWARD_CODES,
  RARE_SURNAME_EVERY,
  RARE_SURNAMES,
  REGISTRATION_AGES,
  REGISTRATIONS,
  registration,
  slug,
  STREETS,
  SURNAMES,
} from './people.ts';
import { productSnapshot, snapshotSql } from './policy-snapshot.ts';

/** A list as rows `(n, value)`, n from 1: picks are joins (a text array's nth element is a walk). */
const listRows = (values: readonly string[]) =>
  sql`(select n::int, value from unnest(${values}::text[]) with ordinality as l(value, n))`;

export interface PolicyBatch {
  readonly companyId: string;
  readonly environment: string;
  /** The policies' indexes, `from` to `to` inclusive. */
  readonly from: number;
  readonly to: number;
  readonly referenceOffset: number;
  readonly passwordHash: string;
  readonly ids: IdPrefixes;
  /** Terms start on these days rather than within the last 360 days. */
  readonly starts: { firstOn: string; days: number } | undefined;
  /** The month of the statements. */
  readonly month: { firstOn: string; days: number } | undefined;
  /** Each policy also gets its statement of `month`. */
  readonly statements: boolean;
  readonly productReference: string | null;
  /** The seed's now. */
  readonly at: Date;
}

/** Policies `from` to `to` (their indexes) with their users and versions, in one statement; how many were written. */
export async function insertPolicyBatch(trx: Executor, values: PolicyBatch): Promise<number> {
  const result = await sql<{ policies: string }>`
    with ${pickLists()},
    ${draws(values)},
    ${people(values)},
    ${termsAndStatements(values)},
    ${inserts(values)}
    select count(*) as policies from new_policies`.execute(trx);
  return Number(result.rows[0]?.policies ?? 0);
}

/** The lists the draws pick from, as rows `(n, value)`. */
function pickLists() {
  const surnames = [...SURNAMES, ...RARE_SURNAMES];
  return sql`words as ${listRows(wordlist)},
    firsts as ${listRows([...FEMALE_FIRST_NAMES, ...MALE_FIRST_NAMES])},
    middles as ${listRows(MIDDLE_NAMES)},
    surnames as (
      select n::int, value, slug
      from unnest(${surnames}::text[], ${surnames.map(slug)}::text[]) with ordinality as l(value, slug, n)
    ),
    places as (
      select n::int, outward, town
      from unnest(${OUTWARD_CODES.map(([code]) => code)}::text[], ${OUTWARD_CODES.map(([, town]) => town)}::text[])
        with ordinality as l(outward, town, n)
    ),
    streets as ${listRows(STREETS)},
    domains as ${listRows(EMAIL_DOMAINS)},
    ages as ${listRows(REGISTRATION_AGES)}`;
}

/** Each index's draws: PostgreSQL's hash of the index, its bits read for each pick. */
function draws(values: PolicyBatch) {
  return sql`draws as (
      select i, draw.h, draw.female,
        -- Three BIP-39 words, as the service draws them (policy-reference.ts), but from a bijection
        -- of the index (× an odd number, modulo 2,048³): distinct within a seed.
        1 + draw.r % 2048 as word_1, 1 + (draw.r / 2048) % 2048 as word_2, 1 + draw.r / 4194304 as word_3,
        draw.v,
        case when draw.female then 1 + (draw.h % ${FEMALE_FIRST_NAMES.length})
          else ${FEMALE_FIRST_NAMES.length + 1} + (draw.h % ${MALE_FIRST_NAMES.length}) end as first_index,
        case when i % 5 = 0 then 1 + (draw.h >> 11) % ${MIDDLE_NAMES.length} end as middle_index,
        case when i % ${RARE_SURNAME_EVERY} = 0
          then ${SURNAMES.length + 1} + (i / ${RARE_SURNAME_EVERY}) % ${RARE_SURNAMES.length}
          -- Rank r drawn with probability (r/n)^(1/1.3) − ((r−1)/n)^(1/1.3): Smith ~1.7 %, the last ~0.4 %.
          else 1 + floor(${SURNAMES.length} * power(draw.u, 1.3))::int end as last_index,
        1 + (draw.h >> 3) % ${EMAIL_DOMAINS.length} as domain_index,
        1 + (draw.h >> 9) % ${OUTWARD_CODES.length} as place_index,
        1 + (draw.h >> 21) % ${STREETS.length} as street_index,
        1 + (draw.v / 529) % ${REGISTRATION_AGES.length} as age_index
      from generate_series(${values.from}::bigint, ${values.to}::bigint) as i
      cross join lateral (select
        -- PostgreSQL's own 64-bit hash of the index, its sign bit cleared: each pick reads other bits.
        hashint8extended(i, 0) & 9223372036854775807 as h,
        (hashint8extended(i, 1) & 2147483647) / 2147483648.0::float8 as u,
        (i * 2654435761 + ${values.referenceOffset}::bigint) % 8589934592 as r,
        -- The registration's number: a bijection of the index (× a number prime to their count).
        (i * 2654435761) % ${REGISTRATIONS}::bigint as v,
        i % 2 = 0 as female) as draw
    )`;
}

/** The person, address, vehicle and term start each index's draws make. */
function people(values: PolicyBatch) {
  const id = (prefix: string) => sql`(${prefix} || lpad(to_hex(d.i), 12, '0'))::uuid`;
  const at = sql`${values.at}::timestamptz`;
  const startOn =
    values.starts === undefined
      ? sql`(${at} at time zone 'Europe/London')::date - ((d.i * 37) % 360)::int`
      : sql`${values.starts.firstOn}::date + ((d.i * 37) % ${values.starts.days})::int`;
  return sql`people as (
      select d.i, d.h, ${id(values.ids.user)} as user_id, ${id(values.ids.policy)} as policy_id,
        ${id(values.ids.version)} as version_id, ${id(values.ids.statement)} as statement_id,
        w1.value || '-' || w2.value || '-' || w3.value as policy_reference,
        ${registration()} as reg,
        f.value as first_name,
        concat_ws(' ', f.value, m.value) as first_names,
        s.value as last_names,
        lower(f.value) || '.' || s.slug || d.i || '@' || e.value as email,
        left(lower(f.value), 1) || left(s.slug, 11) || d.i as username,
        case when d.female then (array['Ms', 'Mrs', 'Miss', 'Dr'])[1 + (d.h >> 7) % 4] else 'Mr' end as title,
        pl.outward || ' ' || (1 + (d.h >> 15) % 9)::text
          || substr(${INWARD_LETTERS}, 1 + ((d.h >> 19) % ${INWARD_LETTERS.length})::int, 1)
          || substr(${INWARD_LETTERS}, 1 + ((d.h >> 24) % ${INWARD_LETTERS.length})::int, 1) as postcode,
        pl.town,
        (1 + (d.h >> 13) % 180)::text || ' ' || st.value as line_1,
        ${startOn} as start_on,
        (d.i * 7) % 4 <> 0 as auto_renew
      from draws d
      join words w1 on w1.n = d.word_1
      join words w2 on w2.n = d.word_2
      join words w3 on w3.n = d.word_3
      join firsts f on f.n = d.first_index
      left join middles m on m.n = d.middle_index
      join surnames s on s.n = d.last_index
      join domains e on e.n = d.domain_index
      join places pl on pl.n = d.place_index
      join streets st on st.n = d.street_index
      join ages a on a.n = d.age_index
    )`;
}

/** The terms, their snapshots, and (when asked) the month's statement lines. */
function termsAndStatements(values: PolicyBatch) {
  const monthEnd = monthEndSql(values);
  const withStatements = withStatementsSql(values);
  return sql`terms as (
      select p.*,
        'usr_' || left(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), 16) as user_reference,
        (p.start_on::timestamp at time zone 'Europe/London') as start_at,
        ((p.start_on + interval '1 year')::timestamp at time zone 'Europe/London') - interval '1 second' as end_at,
        (p.start_on::timestamp at time zone 'Europe/London')
          - make_interval(days => (p.i % 14)::int, secs => ((p.h >> 5) % 86400)::int) as created_at
      from people p
    ),
    docs as materialized (
      select t.*, ${productSnapshot(sql`(${snapshotSql()})::jsonb`, values.productReference)} as snapshot
      from terms t
    ),
    -- A statement of the month for each policy (when asked): one installment, usage drawn from the
    -- hash, a capped day on one policy in four, free distance on one in seven, a credit on one in ten.
    bills as (
      select d.*, ${monthEnd} as end_at_month,
        round((d.snapshot #>> '{pricing,subscription_premium}')::numeric * 100)::bigint as subscription,
        (100 + (d.h >> 27) % 5000)::bigint as usage
      from docs d where ${withStatements}
    ),
    lines as (
      select b.*, case when b.i % 4 = 0 then least(b.usage, 150) else 0 end::bigint as cap,
        case when b.i % 7 = 0 then least(b.usage, 80) / 2 else 0 end::bigint as free,
        case when b.i % 10 = 0 then 500 else 0 end::bigint as credits
      from bills b
    )`;
}

/** The inserts: users, policy references, policies, versions and statements. */
function inserts(values: PolicyBatch) {
  const monthEnd = monthEndSql(values);
  const withStatements = withStatementsSql(values);
  return sql`new_users as (
      insert into users (id, user_reference, company_id, environment, email, username, first_names,
        last_names, password_hash, password_is_temporary, temporary_password_expires_at, created_at, updated_at)
      select user_id, user_reference, ${values.companyId}, ${values.environment}, email, username, first_names,
        last_names, ${values.passwordHash}, true, created_at + make_interval(days => ${TEMPORARY_PASSWORD_DAYS}),
        created_at, created_at
      from docs
    ),
    new_references as (
      insert into policy_references (policy_reference, policy_id)
      select policy_reference, policy_id from docs
      on conflict do nothing
      returning policy_id
    ),
    new_policies as (
      insert into policies (id, policy_reference, company_id, environment, user_id, status, version_count,
        current_start_at, current_end_at, auto_renew, billing_day, subscription_premium_pence,
        subscription_installments, first_start_at, billed_through_at, product_reference, search_text, created_at, updated_at)
      select policy_id, policy_reference, ${values.companyId}, ${values.environment}, user_id, 'active',
        case when ${withStatements} then 2 else 1 end,
        start_at, end_at, auto_renew, extract(day from start_on)::smallint,
        round((snapshot #>> '{pricing,subscription_premium}')::numeric * 100),
        (snapshot #>> '{pricing,subscription_installments}')::smallint, start_at,
        case when ${withStatements} then ${monthEnd} end, ${values.productReference}::text, milepost_policy_search_text(policy_reference, snapshot), created_at, created_at
      from docs where policy_id in (select policy_id from new_references)
      returning id
    ),
    new_versions as (
      insert into policy_versions (id, policy_id, sequence, version_type, snapshot, effective_at, created_at, term,
        statement_start_at, statement_end_at, usage_premium_pence)
      select version_id, policy_id, 1, 'nb', snapshot, start_at, created_at, 1, null, null, null
      from docs where policy_id in (select id from new_policies)
      union all
      select statement_id, policy_id, 2, 'st', null, end_at_month, end_at_month, null, start_at, end_at_month, usage
      from lines where policy_id in (select id from new_policies)
    ),
    new_statements as (
      insert into statements (id, policy_id, company_id, environment, period_start_at, period_end_at, journey_count,
        distance_metres, duration_seconds, usage_premium_pence, installments, subscription_premium_pence,
        total_premium_pence, credits_used_pence, billed_premium_pence, cap_credit_pence,
        free_distance_credit_pence, created_at)
      select statement_id, policy_id, ${values.companyId}, ${values.environment}, start_at, end_at_month,
        1 + i % 40, (1 + i % 40) * 8000, (1 + i % 40) * 900, usage, 1, subscription, usage + subscription,
        credits, usage + subscription - cap - free - credits, cap, free, end_at_month
      from lines where policy_id in (select id from new_policies)
    )`;
}

/** The month's last second, Europe/London: where its statements end. */
function monthEndSql(values: PolicyBatch) {
  return values.month === undefined
    ? sql`null::timestamptz`
    : sql`((${values.month.firstOn}::date + interval '1 month')::timestamp at time zone 'Europe/London') - interval '1 second'`;
}

function withStatementsSql(values: PolicyBatch) {
  return values.statements ? sql`true` : sql`false`;
}
