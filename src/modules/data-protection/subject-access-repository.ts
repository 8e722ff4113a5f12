import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';

/*
 * The reads of a subject access export. NOTE: they cross every module's tables on purpose: an export
 * must show each stored row about the person as stored (not one module's view of it), and a test
 * compares it with every table that names a policy or a user. Read-only; nothing here writes.
 * Secrets never leave: no password, token, code or key hash, no sealed token pair.
 */

/** The person an export is about, and the tenant their rows belong to. */
export interface Subject {
  readonly userId: string;
  readonly userReference: string;
  readonly companyId: string;
  readonly companyReference: string;
  readonly companyName: string;
  readonly environment: string;
  readonly email: string;
  /** When the account began: nothing about the person is older (events are read from then on). */
  readonly since: Date;
}

/** One policy of the subject: its id for the queries, its reference for the document. */
export interface SubjectPolicy {
  readonly id: string;
  readonly reference: string;
}

export async function findSubject(
  db: Executor,
  userReference: string,
): Promise<{ subject: Subject; account: Record<string, unknown> } | undefined> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('companies as c', 'c.id', 'u.company_id')
    .select([
      'u.id',
      'u.user_reference',
      'u.company_id',
      'c.company_reference',
      'c.name as company_name',
      'u.environment',
      'u.email',
      'u.username',
      'u.first_names',
      'u.last_names',
      'u.active',
      'u.password_is_temporary',
      'u.temporary_password_expires_at',
      'u.password_changed_at',
      'u.last_login_at',
      'u.created_at',
      'u.updated_at',
    ])
    .where('u.user_reference', '=', userReference)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    subject: {
      userId: row.id,
      userReference: row.user_reference,
      companyId: row.company_id,
      companyReference: row.company_reference,
      companyName: row.company_name,
      environment: row.environment,
      email: row.email,
      since: row.created_at,
    },
    account: {
      user_reference: row.user_reference,
      email: row.email,
      username: row.username,
      first_names: row.first_names,
      last_names: row.last_names,
      active: row.active,
      password_is_temporary: row.password_is_temporary,
      temporary_password_expires_at: row.temporary_password_expires_at,
      password_changed_at: row.password_changed_at,
      last_login_at: row.last_login_at,
      created_at: row.created_at,
      updated_at: row.updated_at,
    },
  };
}

/** Rows read per query: a round trip per this many rows, and at most this many held at once. */
export const EXPORT_BATCH_ROWS = 2_000;

const none = (ids: readonly string[]): boolean => ids.length === 0;
const parsed = (value: unknown): unknown =>
  typeof value === 'string' ? (JSON.parse(value) as unknown) : value;

export async function listPolicies(db: Executor, subject: Subject) {
  const rows = await db
    .selectFrom('policies')
    .select([
      'id',
      'policy_reference',
      'status',
      'product_reference',
      'version_count',
      'first_start_at',
      'current_start_at',
      'current_end_at',
      'auto_renew',
      'renewal_terms',
      'billing_day',
      'subscription_premium_pence',
      'subscription_installments',
      'billed_through_at',
      'created_at',
      'updated_at',
    ])
    .where('user_id', '=', subject.userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(({ id, renewal_terms, ...rest }) => ({
    id,
    record: { ...rest, renewal_terms: parsed(renewal_terms) },
  }));
}

export async function listPolicyVersions(db: Executor, policyId: string) {
  const rows = await db
    .selectFrom('policy_versions')
    .select([
      'id',
      'sequence',
      'version_type',
      'term',
      'effective_at',
      'statement_start_at',
      'statement_end_at',
      'usage_premium_pence',
      'reason',
      'superseded_at',
      'created_at',
      'snapshot',
    ])
    .where('policy_id', '=', policyId)
    .orderBy('sequence')
    .execute();
  return rows.map(({ id, snapshot, ...rest }) => ({
    policy_version_reference: id,
    ...rest,
    snapshot: parsed(snapshot),
  }));
}

export async function listPolicyVersionIds(db: Executor, policyIds: readonly string[]): Promise<string[]> {
  if (none(policyIds)) return [];
  const rows = await db
    .selectFrom('policy_versions')
    .select('id')
    .where('policy_id', 'in', policyIds)
    .execute();
  return rows.map((r) => r.id);
}

/** Proposer emails in the subject's policy versions: emails may have gone to an address since changed. */
export async function listSnapshotEmails(db: Executor, policyIds: readonly string[]): Promise<string[]> {
  if (none(policyIds)) return [];
  const rows = await db
    .selectFrom('policy_versions')
    .select(sql<string | null>`lower(snapshot #>> '{proposer,email}')`.as('email'))
    .distinct()
    .where('policy_id', 'in', policyIds)
    .execute();
  return rows.flatMap((r) => (r.email === null ? [] : [r.email]));
}

export async function listPaymentCustomers(db: Executor, subject: Subject) {
  return db
    .selectFrom('payment_customers')
    .select(['provider', 'provider_customer_id', 'created_at'])
    .where('user_id', '=', subject.userId)
    .orderBy('created_at')
    .execute();
}

// ── Keyset pages: each takes the last row of the previous page ──────────────────────────────────

type After<K> = K | undefined;

export async function pageLoginSessions(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_login_sessions')
    .select(['id', 'created_at', 'expires_at', 'used_at'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageRefreshTokens(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_refresh_tokens')
    .select(['id', 'family_id', 'created_at', 'expires_at', 'rotated_at', 'revoked_at', 'revoked_reason'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageResetCodes(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_reset_codes')
    .select(['id', 'attempts', 'created_at', 'expires_at', 'used_at'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** Journeys of one policy by start, with their encoded routes. */
export async function pageJourneys(
  db: Executor,
  policyId: string,
  after: After<{ start_at: Date; journey_reference: string }>,
) {
  let q = db
    .selectFrom('journeys')
    .select([
      'id as journey_reference',
      'policy_reference',
      'policy_version_id as policy_version_reference',
      'provider_reference',
      'source',
      'device_id',
      'start_at',
      'end_at',
      'distance_metres',
      'gap_distance_metres',
      'distance_unit',
      'usage_rate',
      'usage_premium_pence',
      'start_lat',
      'start_lng',
      'start_name',
      'start_postcode',
      'end_lat',
      'end_lng',
      'end_name',
      'end_postcode',
      'is_void',
      'voided_at',
      'void_reason',
      'late',
      'statement_version_id as billed_by_policy_version_reference',
      'point_count',
      'route_precision',
      'route',
      'created_at',
    ])
    .where('policy_id', '=', policyId);
  if (after !== undefined)
    q = q.where((eb) =>
      eb(eb.refTuple('start_at', 'id'), '>', eb.tuple(after.start_at, after.journey_reference)),
    );
  return q.orderBy('start_at').orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageJourneyVoids(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('journey_voids')
    .select([
      'id',
      'journey_id as journey_reference',
      'reason',
      'usage_premium_pence',
      'billed_statement_version_id as billed_by_policy_version_reference',
      'credited_statement_version_id as credited_by_policy_version_reference',
      'request_id',
      'created_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageJourneyRuleCredits(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('journey_rule_credits')
    .select([
      'id',
      'journey_id as journey_reference',
      'statement_id as policy_version_reference',
      'rule',
      'day',
      'distance_metres',
      'credit_pence',
      'created_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** Every device ever bound to one of the policies, with those bindings (not other people's). */
export async function listDevices(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  const bindings = await db
    .selectFrom('device_bindings as b')
    .innerJoin('devices as d', 'd.id', 'b.device_id')
    .select([
      'b.id',
      'b.device_id as device_key',
      'd.device_id',
      'b.policy_id',
      'b.policy_reference',
      'b.bound_at',
      'b.unbound_at',
    ])
    .where('b.policy_id', 'in', policyIds)
    .orderBy('b.bound_at')
    .orderBy('b.id')
    .execute();
  const keys = [...new Set(bindings.map((b) => b.device_key))];
  if (keys.length === 0) return [];
  const devices = await db
    .selectFrom('devices')
    .select(['id', 'device_id', 'kind', 'vin', 'last_seen_at', 'offline_since', 'created_at', 'updated_at'])
    .where('id', 'in', keys)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return devices.map(({ id, ...device }) => ({
    key: id,
    record: {
      ...device,
      bindings: bindings
        .filter((b) => b.device_key === id)
        .map((b) => ({
          id: b.id,
          policy_reference: b.policy_reference,
          bound_at: b.bound_at,
          unbound_at: b.unbound_at,
        })),
    },
  }));
}

/**
 * Positions of one device that belong to the subject's policies, by time: the key (device, time)
 * is the table's primary key, so each page is an index range scan however many positions there are.
 */
export async function pagePositions(
  db: Executor,
  deviceKey: string,
  policyIds: readonly string[],
  after: After<{ time: Date }>,
) {
  let q = db
    .selectFrom('positions')
    .select([
      'time',
      'policy_id',
      'lat',
      'lon',
      'speed_kmh',
      'heading',
      'accuracy_m',
      'ignition',
      'odometer_metres',
      'received_at',
    ])
    .where('device_id', '=', deviceKey)
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('time', '>', after.time);
  return q.orderBy('time').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageOdometerReadings(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('odometer_readings')
    .select(['id', 'policy_id', 'device_id', 'reading_metres', 'time', 'source', 'created_at'])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageStatements(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('statements as s')
    .leftJoin('statement_odometers as o', 'o.statement_id', 's.id')
    .select([
      's.id',
      's.policy_id',
      's.period_start_at',
      's.period_end_at',
      's.billing_date',
      's.final',
      's.journey_count',
      's.distance_metres',
      's.duration_seconds',
      's.usage_premium_pence',
      's.installments',
      's.subscription_premium_pence',
      's.total_premium_pence',
      's.cap_credit_pence',
      's.annual_cap_credit_pence',
      's.free_distance_credit_pence',
      's.minimum_top_up_pence',
      's.credits_used_pence',
      's.brought_forward_pence',
      's.carried_forward_pence',
      's.billed_premium_pence',
      's.capped_days',
      's.payment_id',
      's.created_at',
      'o.statement_id as odometer_statement_id',
      'o.start_metres as odometer_start_metres',
      'o.start_at as odometer_start_at',
      'o.end_metres as odometer_end_metres',
      'o.end_at as odometer_end_at',
      'o.gps_metres as odometer_gps_metres',
    ])
    .where('s.policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('s.id', '>', after.id);
  return q.orderBy('s.id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pagePolicyCredits(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('policy_credits')
    .select(['id', 'policy_id', 'amount_pence', 'source', 'reference', 'reason', 'created_at'])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function listPolicyUsageYears(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  return db
    .selectFrom('policy_usage_years')
    .select(['policy_id', 'year_start_at', 'charged_metres'])
    .where('policy_id', 'in', policyIds)
    .orderBy('policy_id')
    .orderBy('year_start_at')
    .execute();
}

export async function listMileageBudgets(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  return db
    .selectFrom('mileage_budgets')
    .select(['policy_id', 'distance_per_month', 'usage_unit', 'created_at', 'updated_at'])
    .where('policy_id', 'in', policyIds)
    .orderBy('created_at')
    .execute();
}

export async function listUsageAlerts(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  return db
    .selectFrom('usage_alerts')
    .select(['policy_id', 'kind', 'period', 'created_at'])
    .where('policy_id', 'in', policyIds)
    .orderBy('created_at')
    .orderBy('kind')
    .orderBy('period')
    .execute();
}

export async function pagePayments(db: Executor, policyIds: readonly string[], after: After<{ id: string }>) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('payments')
    .select([
      'id',
      'policy_id',
      'policy_version_id',
      'kind',
      'purpose',
      'status',
      'amount_pence',
      'refunded_pence',
      'currency',
      'refund_of',
      'provider',
      'provider_payment_id',
      'provider_customer_id',
      'payment_method_id',
      'decline_code',
      'error_message',
      'attempts',
      'first_failed_at',
      'next_attempt_at',
      'awaiting_new_card',
      'created_at',
      'updated_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** Emails of the tenant to any of `recipients` (lower case), oldest first. Bodies are filtered by the caller. */
export async function pageEmails(
  db: Executor,
  subject: Subject,
  recipients: readonly string[],
  after: After<{ created_at: Date; id: string }>,
) {
  if (none(recipients)) return [];
  let q = db
    .selectFrom('outbox_emails')
    .select([
      'id',
      'template',
      'recipient',
      'subject',
      'status',
      'attempts',
      'created_at',
      'sent_at',
      'text_body',
    ])
    .where('company_id', '=', subject.companyId)
    .where('environment', '=', subject.environment)
    .where(sql<string>`lower(recipient)`, 'in', recipients);
  if (after !== undefined)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)));
  return q.orderBy('created_at').orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** What names the subject in the audit trail. */
export interface AuditLinks {
  readonly policyIds: readonly string[];
  /** `name:value` as the staff access hook writes `resource`: the user, the policies, their versions. */
  readonly resources: readonly string[];
}

/**
 * Audit records about the subject, by id: rows of their policies (`policy_id`), changes to their
 * account and to tables keyed by user (`row_key`, or `user_id` in the recorded fields), requests that
 * named them, their policies, versions or journeys (`resource`), and the emails and events about them
 * recorded as rows changed. The staff member's network address is left out: it is theirs, not the
 * subject's. NOTE: only `policy_id` is indexed; the rest is a scan of the trail in id
 * order, page by page, which is what an occasional export can afford.
 */
export async function pageAuditRecords(
  db: Executor,
  subject: Subject,
  links: AuditLinks,
  recipients: readonly string[],
  policyReferences: readonly string[],
  after: After<{ id: number }>,
) {
  const { policyIds, resources } = links;
  let q = db
    .selectFrom('audit_records as a')
    .select([
      'a.id',
      'a.occurred_at',
      'a.request_id',
      'a.actor',
      'a.role',
      'a.action',
      'a.resource',
      'a.outcome',
      'a.policy_id',
      'a.table_name',
      'a.row_key',
      'a.operation',
      'a.before',
      'a.after',
    ])
    .where((eb) => {
      const userId = subject.userId;
      const journeyResources = () =>
        eb
          .selectFrom('journeys')
          .select(sql<string>`'journey_reference:' || id::text`.as('resource'))
          .where('policy_id', 'in', policyIds);
      const changedOf = (field: string) =>
        sql<string | null>`coalesce(a.after ->> ${field}, a.before ->> ${field})`;
      return eb.or([
        ...(none(policyIds) ? [] : [eb('a.policy_id', 'in', policyIds)]),
        eb.and([eb('a.table_name', '=', 'users'), eb('a.row_key', '=', userId)]),
        eb(changedOf('user_id'), '=', userId),
        ...(none(resources) ? [] : [eb('a.resource', 'in', resources)]),
        ...(none(policyIds) ? [] : [eb('a.resource', 'in', journeyResources())]),
        ...(none(recipients)
          ? []
          : [
              eb.and([
                eb('a.table_name', '=', 'outbox_emails'),
                eb('a.company_id', '=', subject.companyId),
                eb(sql<string>`lower(${changedOf('recipient')})`, 'in', recipients),
              ]),
            ]),
        eb.and([
          eb('a.table_name', '=', 'events'),
          eb('a.company_id', '=', subject.companyId),
          eb.or([
            ...(none(policyReferences)
              ? []
              : [
                  eb(
                    sql<string>`coalesce(a.after, a.before) #>> '{data,policy_reference}'`,
                    'in',
                    policyReferences,
                  ),
                ]),
            eb(
              sql<string>`coalesce(a.after, a.before) #>> '{data,user_reference}'`,
              '=',
              subject.userReference,
            ),
          ]),
        ]),
      ]);
    });
  if (after !== undefined) q = q.where('a.id', '>', after.id);
  return q.orderBy('a.id').limit(EXPORT_BATCH_ROWS).execute();
}

/**
 * Events of the tenant whose data names one of the policies or the user, by sequence. NOTE: `data`
 * is not indexed: this reads the tenant's events in order (events_tenant_idx) and filters them.
 */
export async function pageEvents(
  db: Executor,
  subject: Subject,
  policyReferences: readonly string[],
  after: After<{ sequence: number }>,
) {
  let q = db
    .selectFrom('events')
    .select(['id', 'sequence', 'type', 'data', 'created_at'])
    .where('company_id', '=', subject.companyId)
    .where('environment', '=', subject.environment)
    // The months since the account began, not every month of events (they are partitioned by month).
    .where('created_at', '>=', subject.since)
    .where((eb) =>
      eb.or([
        ...(none(policyReferences)
          ? []
          : [eb(sql<string>`data ->> 'policy_reference'`, 'in', policyReferences)]),
        eb(sql<string>`data ->> 'user_reference'`, '=', subject.userReference),
      ]),
    );
  if (after !== undefined) q = q.where('sequence', '>', after.sequence);
  const rows = await q.orderBy('sequence').limit(EXPORT_BATCH_ROWS).execute();
  return rows.map((r) => ({ ...r, data: parsed(r.data) }));
}

/** Webhook deliveries of some events: where each went (the endpoint's reference) and how it went. */
export async function listDeliveries(db: Executor, eventIds: readonly string[]) {
  if (none(eventIds)) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([
      'd.event_id',
      'd.delivery_reference',
      'e.endpoint_reference',
      'd.status',
      'd.attempt_count',
      'd.last_attempt_at',
      'd.last_response_status',
      'd.delivered_at',
      'd.next_attempt_at',
      'd.created_at',
    ])
    .where('d.event_id', 'in', eventIds)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .execute();
}
