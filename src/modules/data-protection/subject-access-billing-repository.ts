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
