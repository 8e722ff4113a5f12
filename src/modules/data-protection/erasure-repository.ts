import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../schema.ts';
import { scrubJson, scrubText } from './rules/erasure.ts';

/**
 * The erasure's SQL. Each function takes the transaction first. Columns the modules' table types do
 * not declare (`users.erased_at`, pg-boss's own schema) and the generic scrub go through raw SQL.
 */

export interface ErasureSubject {
  readonly id: string;
  readonly userReference: string;
  readonly companyId: string;
  readonly environment: string;
  readonly email: string;
  readonly username: string;
  readonly firstNames: string;
  readonly lastNames: string;
  readonly createdAt: Date;
  readonly erasedAt: Date | null;
}

/** The account, locked for the erasure's transaction; undefined when there is none. */
export async function lockSubject(trx: Executor, userReference: string): Promise<ErasureSubject | undefined> {
  const result = await sql<{
    id: string;
    user_reference: string;
    company_id: string;
    environment: string;
    email: string;
    username: string;
    first_names: string;
    last_names: string;
    created_at: Date;
    erased_at: Date | null;
  }>`
    select id, user_reference, company_id, environment, email, username, first_names, last_names,
      created_at, erased_at
    from users where user_reference = ${userReference} for update`.execute(trx);
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return {
    id: row.id,
    userReference: row.user_reference,
    companyId: row.company_id,
    environment: row.environment,
    email: row.email,
    username: row.username,
    firstNames: row.first_names,
    lastNames: row.last_names,
    createdAt: new Date(row.created_at),
    erasedAt: row.erased_at === null ? null : new Date(row.erased_at),
  };
}

export interface SubjectPolicy {
  readonly id: string;
  readonly reference: string;
  readonly currentEndAt: Date;
  readonly renewalTerms: unknown;
}

/** The account's policies, locked: nothing changes them while they are erased. */
export async function lockPolicies(trx: Executor, userId: string): Promise<SubjectPolicy[]> {
  const rows = await trx
    .selectFrom('policies')
    .select(['id', 'policy_reference', 'current_end_at', 'renewal_terms'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .forUpdate()
    .execute();
  return rows.map((row) => ({
    id: row.id,
    reference: row.policy_reference,
    currentEndAt: new Date(row.current_end_at),
    renewalTerms: parsedJson(row.renewal_terms),
  }));
}

const parsedJson = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

export interface VersionText {
  readonly id: string;
  readonly snapshot: unknown;
  readonly reason: string | null;
}

export async function listVersions(trx: Executor, policyIds: readonly string[]): Promise<VersionText[]> {
  if (policyIds.length === 0) return [];
  const rows = await trx
    .selectFrom('policy_versions')
    .select(['id', 'snapshot', 'reason'])
    .where('policy_id', 'in', policyIds)
    .execute();
  return rows.map((row) => ({ id: row.id, snapshot: parsedJson(row.snapshot), reason: row.reason }));
}

export async function updateVersion(
  trx: Executor,
  id: string,
  snapshot: unknown,
  reason: string | null,
): Promise<void> {
  await sql`
    update policy_versions set snapshot = ${snapshot === null ? null : JSON.stringify(snapshot)}::jsonb,
      reason = ${reason}
    where id = ${id}`.execute(trx);
}

/**
 * Renewal terms pseudonymised; the search text recomputed from the (erased) latest snapshot.
 * NOTE: `payments_revision` is bumped because the policies module caches each policy's view in
 * memory, in every process, keyed on `version_count` and `payments_revision` (versions never change
 * but by erasure): without the bump GET /policys would go on showing the erased names.
 */
export async function updatePolicyText(trx: Executor, id: string, renewalTerms: unknown): Promise<void> {
  await sql`
    update policies p set
      payments_revision = p.payments_revision + 1,
      renewal_terms = ${renewalTerms === null || renewalTerms === undefined ? null : JSON.stringify(renewalTerms)}::jsonb,
      search_text = (
        select milepost_policy_search_text(p.policy_reference, v.snapshot) from policy_versions v
        where v.policy_id = p.id and v.snapshot is not null order by v.sequence desc limit 1)
    where p.id = ${id}`.execute(trx);
}

/** The account keeps its reference and tenant; it names nobody and can never sign in again. */
export async function eraseAccount(
  trx: Executor,
  userId: string,
  values: { email: string; username: string; name: string; passwordHash: string; at: Date },
): Promise<void> {
  await sql`
    update users set email = ${values.email}, username = ${values.username},
      first_names = ${values.name}, last_names = ${values.name}, password_hash = ${values.passwordHash},
      password_is_temporary = false, temporary_password_expires_at = null, active = false,
      session_generation = session_generation + 1, erased_at = ${values.at}, updated_at = ${values.at}
    where id = ${userId}`.execute(trx);
}

const POSTCODE_SHAPE = sql.lit('^([A-Z]{1,2}[0-9][A-Z0-9]?)[0-9][A-Z]{2}$');

/** `postcodeDistrict` (platform/postcodes.ts) in SQL, for set-based updates; a test holds them equal. */
export function postcodeDistrictSql(postcode: RawBuilder<unknown>): RawBuilder<string | null> {
  const upper = sql`regexp_replace(upper(${postcode}), '^\\s+|\\s+$', '', 'g')`;
  const whole = sql`regexp_replace(${upper}, '\\s', '', 'g')`;
  const firstWord = sql`(regexp_split_to_array(${upper}, '\\s+'))[1]`;
  return sql<string | null>`
    case when ${postcode} is null then null
         when ${whole} ~ ${POSTCODE_SHAPE} then substring(${whole} from ${POSTCODE_SHAPE})
         else coalesce(substring(${firstWord} from ${POSTCODE_SHAPE}), ${firstWord}) end`;
}

/**
 * Journeys keep distance, times, premiums and billing links; they lose their routes (empty, no
 * points: migration 0029 allows it), coordinates and place names, and their postcodes are cut to the
 * district.
 */
export async function eraseJourneys(trx: Executor, policyIds: readonly string[]): Promise<number> {
  if (policyIds.length === 0) return 0;
  const result = await sql`
    update journeys set route = '', point_count = 0, start_lat = null, start_lng = null, end_lat = null,
      end_lng = null, start_name = null, end_name = null,
      start_postcode = ${postcodeDistrictSql(sql.ref('start_postcode'))},
      end_postcode = ${postcodeDistrictSql(sql.ref('end_postcode'))}
    where policy_id in (${sql.join(policyIds)})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Emails to them (by address, by the account they were queued for, or naming their policies): the
 * recipient becomes the pseudonym, bodies and template data go, the subject is scrubbed; one not yet sent
 * never will be (the email job finds it failed). One queued for the account after this transaction
 * began is refused when queued or when its job runs (notifications: `user_id` of an erased account).
 */
export async function eraseEmails(
  trx: Executor,
  input: {
    userId: string;
    recipients: readonly string[];
    references: readonly string[];
    pseudonym: string;
    matcher: RegExp | undefined;
    at: Date;
  },
): Promise<number> {
  const lowered = input.recipients.map((r) => r.toLowerCase());
  const references = input.references.map((r) => `%${likeEscape(r)}%`);
  const rows = await sql<{ id: string; subject: string | null; status: string }>`
    select id, subject, status from outbox_emails
    where lower(recipient) in (${sql.join(lowered.length > 0 ? lowered : [''])})
       or user_id = ${input.userId}
       ${references.length > 0 ? sql`or data::text like any(${references}::text[])` : sql``}`.execute(trx);
  for (const row of rows.rows) {
    const subject = row.subject === null ? '[erased]' : scrubText(row.subject, input.matcher);
    await sql`
      update outbox_emails set recipient = ${input.pseudonym}, subject = ${subject}, text_body = null,
        html_body = null, data = null,
        status = case when status = 'pending' then 'failed' else status end,
        last_error = case when status = 'pending' then 'not sent: the recipient was erased' else last_error end
      where id = ${row.id}`.execute(trx);
  }
  return rows.rows.length;
}

export const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `%value%` patterns for `ilike any`, the prefilter of the free-text scrub. */
export const containsPatterns = (values: readonly string[]): string[] =>
  values.map((value) => `%${likeEscape(value)}%`);

export interface ScrubTarget {
  /** Schema-qualified or plain table name. */
  readonly table: string;
  /** A column (or an expression over columns) that names one row. */
  readonly key: string | RawBuilder<unknown>;
  readonly jsonColumns?: readonly string[];
  readonly textColumns?: readonly string[];
  /** Which rows are about the person (a condition over the table's columns). */
  readonly where: RawBuilder<unknown>;
}

/**
 * Free text scrubbed of the person's values: every row `where` selects has each of its JSON columns'
 * strings and each text column scrubbed (see `scrubJson`); only rows that changed are written.
 * Returns the rows written.
 */
export async function scrubRows(
  trx: Executor,
  target: ScrubTarget,
  matcher: RegExp | undefined,
): Promise<number> {
  if (matcher === undefined) return 0;
  const jsonColumns = target.jsonColumns ?? [];
  const textColumns = target.textColumns ?? [];
  const columns = [...jsonColumns, ...textColumns];
  const table = sql.table(target.table);
  const key = typeof target.key === 'string' ? sql.ref(target.key) : target.key;
  const rows = await sql<Record<string, unknown>>`
    select ${key} as erasure_key, ${sql.join(columns.map((c) => sql.ref(c)))}
    from ${table} where ${target.where}`.execute(trx);
  let written = 0;
  for (const row of rows.rows) {
    const sets: RawBuilder<unknown>[] = [];
    for (const column of jsonColumns) {
      const value = parsedJson(row[column]);
      if (value === null || value === undefined) continue;
      const scrubbed = scrubJson(value, matcher);
      if (scrubbed.changed) sets.push(sql`${sql.ref(column)} = ${JSON.stringify(scrubbed.value)}::jsonb`);
    }
    for (const column of textColumns) {
      const value = row[column];
      if (typeof value !== 'string') continue;
      const scrubbed = scrubText(value, matcher);
      if (scrubbed !== value) sets.push(sql`${sql.ref(column)} = ${scrubbed}`);
    }
    if (sets.length === 0) continue;
    // Compared as the key's own type (a uuid id), so its index finds the row (in each month's partition).
    await sql`update ${table} set ${sql.join(sets)} where ${key} = ${row['erasure_key']}`.execute(trx);
    written += 1;
  }
  return written;
}

/** Whether pg-boss's schema is there (it is wherever the service ran; a bare migrated database has none). */
export async function hasJobSchema(trx: Executor): Promise<boolean> {
  const result = await sql<{ found: boolean }>`
    select exists (select 1 from information_schema.tables where table_schema = 'pgboss' and table_name = 'job') as found`.execute(
    trx,
  );
  return result.rows[0]?.found === true;
}

/**
 * This transaction may rewrite audit records' before/after (migration 0029), and its own changes are
 * not copied into the trail (the row triggers read `milepost.audit`): the request itself is recorded
 * once, by the staff access hook.
 */
export async function enterErasureMode(trx: Executor): Promise<void> {
  await sql`select set_config('milepost.erasure', 'on', true), set_config('milepost.audit', '', true)`.execute(
    trx,
  );
}

export interface QuoteText {
  readonly id: string;
  readonly input: unknown;
  readonly breakdown: unknown;
}

/**
 * The quotes about the person, locked: in their company and environment, asked for with one of
 * `emails` (lower case) or bound to one of their policies.
 */
export async function lockQuotes(
  trx: Executor,
  scope: { companyId: string; environment: string },
  emails: readonly string[],
  policyIds: readonly string[],
): Promise<QuoteText[]> {
  const byEmail = emails.length > 0 ? sql`q.applicant_email in (${sql.join(emails)})` : sql`false`;
  const bound =
    policyIds.length > 0
      ? sql`q.id in (select quote_id from quote_bindings where policy_id in (${sql.join(policyIds)}))`
      : sql`false`;
  const rows = await sql<{ id: string; input: unknown; breakdown: unknown }>`
    select q.id, q.input, q.breakdown from quotes q
    where q.company_id = ${scope.companyId} and q.environment = ${scope.environment}
      and (${byEmail} or ${bound})
    for update of q`.execute(trx);
  return rows.rows.map((r) => ({ id: r.id, input: parsedJson(r.input), breakdown: parsedJson(r.breakdown) }));
}

/** A quote's input replaced by its pseudonym, its breakdown scrubbed, the applicant's email gone. */
export async function pseudonymiseQuoteText(
  trx: Executor,
  id: string,
  values: { input: unknown; breakdown: unknown; at: Date },
): Promise<void> {
  await sql`
    update quotes set input = ${JSON.stringify(values.input)}::jsonb,
      breakdown = ${JSON.stringify(values.breakdown)}::jsonb, applicant_email = null,
      pseudonymised_at = coalesce(pseudonymised_at, ${values.at})
    where id = ${id}`.execute(trx);
}
