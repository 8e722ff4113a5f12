import type { Executor } from '../../schema.ts';
import { EXPORT_BATCH_ROWS, none, type After } from './subject-access-repository.ts';

/* The reads of a subject access export about money: statements, credits, usage years, mileage
 * budgets and alerts, payments and Direct Debit mandates (see subject-access-repository.ts). */

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
      's.score_adjustment_pence',
      's.score_months',
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
      'method_type',
      'mandate_id',
      'collect_on',
      'notice_sent_at',
      'settled_at',
      'created_at',
      'updated_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageMandates(db: Executor, policyIds: readonly string[], after: After<{ id: string }>) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('direct_debit_mandates')
    .select([
      'id',
      'policy_id',
      'provider',
      'provider_customer_id',
      'setup_intent_id',
      'payment_method_id',
      'provider_mandate_id',
      'reference',
      'status',
      'account_holder_name',
      'sort_code',
      'account_last4',
      'is_default',
      'created_at',
      'updated_at',
      'activated_at',
      'cancelled_at',
      'cancel_reason',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** Driving scores of the person's trips (a row per trip cut from their devices). */
export async function pageTripScores(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ journey_id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('trip_scores')
    .select([
      'policy_id',
      'journey_id',
      'month',
      'start_at',
      'distance_metres',
      'night_metres',
      'score',
      'voided_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('journey_id', '>', after.journey_id);
  return q.orderBy('journey_id').limit(EXPORT_BATCH_ROWS).execute();
}

/** The driving events of the person's trips, with where and when they happened. */
export async function pageTripScoreEvents(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('trip_score_events')
    .select([
      'id',
      'policy_id',
      'journey_id',
      'kind',
      'occurred_at',
      'lat',
      'lng',
      'speed_kmh',
      'acceleration_mps2',
      'duration_seconds',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function listScoreMonths(db: Executor, policyIds: readonly string[]) {
  if (none(policyIds)) return [];
  return db
    .selectFrom('score_months')
    .select(['policy_id', 'month', 'score', 'distance_metres', 'provisional', 'closed_at'])
    .where('policy_id', 'in', policyIds)
    .orderBy('policy_id')
    .orderBy('month')
    .execute();
}

/** The person's disputes of driving events, with staff's decisions (who decided is staff's, not theirs). */
export async function pageScoreDisputes(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('score_disputes')
    .select([
      'id',
      'policy_id',
      'event_id',
      'journey_id',
      'month',
      'reason',
      'details',
      'state',
      'decision_reason',
      'created_at',
      'decided_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** How each renewal of the person's policies was priced (the renewal, its new-business equivalent, last year's). */
export async function pageRenewalPrices(
  db: Executor,
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('renewal_prices')
    .select([
      'id',
      'policy_id',
      'product_reference',
      'stage',
      'outcome',
      'start_at',
      'rated_on',
      'cap_applied',
      'capped',
      'renewal_yearly_pence',
      'new_business_yearly_pence',
      'last_year_yearly_pence',
      'renewal_pricing',
      'new_business_pricing',
      'rated_pricing',
      'last_year_pricing',
      'reasons',
      'priced_at',
    ])
    .where('policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}
