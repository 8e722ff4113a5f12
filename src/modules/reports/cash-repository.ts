import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { CashKind, CashStatus } from './rules/cash-summary.ts';

/** One payment or refund as the cash report shows it, with the policy and version it settles. */
export interface CashPaymentRow {
  readonly id: string;
  readonly kind: CashKind;
  readonly purpose: string;
  readonly status: CashStatus;
  readonly amountPence: number;
  readonly refundedPence: number;
  readonly currency: string;
  readonly provider: string;
  readonly providerPaymentId: string | null;
  readonly refundOf: string | null;
  readonly policyReference: string | null;
  readonly policyVersionId: string | null;
  readonly versionType: string | null;
  /** Instants as ISO 8601 UTC text with milliseconds (see `isoText`). */
  readonly statementStartAt: string | null;
  readonly statementEndAt: string | null;
  readonly declineCode: string | null;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly methodType: string;
  readonly settledAt: string | null;
  /** The instant the payment counts at: its settlement (a Direct Debit's), else its creation. */
  readonly cashAt: string;
}

/**
 * An instant as `toISOString()` writes it, made by the database: for a report of a million rows,
 * parsing each timestamp into a Date and formatting it back was a third of the time (bench in the
 * report's notes). Milliseconds are truncated, as a JS Date truncates them.
 */
const isoText = (column: string): RawBuilder<string> =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Where a payment counts: a Direct Debit once settled on its settlement, everything else when asked for. */
const CASH_AT = sql`coalesce(p.settled_at, p.created_at)`;

/**
 * Up to `limit` of the tenant's payments and refunds counting in [fromAt, toAt) (created then, or for a
 * Direct Debit collection, settled then), in that order, after
 * the payment `afterId` (a keyset: the position is that row's own created_at and id, read in SQL, so no
 * timestamp goes through a JS Date and loses its microseconds). Intents that never bound a policy
 * (purpose `intent`) moved no money and are left out, as GET /payments leaves them out.
 */
export async function listCashPayments(
  db: Executor,
  tenant: Tenant,
  range: { readonly fromAt: Date; readonly toAt: Date },
  afterId: string | undefined,
  limit: number,
): Promise<CashPaymentRow[]> {
  let query = db
    .selectFrom('payments as p')
    .leftJoin('policies as pol', 'pol.id', 'p.policy_id')
    .leftJoin('policy_versions as v', 'v.id', 'p.policy_version_id')
    .select([
      'p.id',
      'p.kind',
      'p.purpose',
      'p.status',
      'p.amount_pence',
      'p.refunded_pence',
      'p.currency',
      'p.provider',
      'p.provider_payment_id',
      'p.refund_of',
      'pol.policy_reference',
      'p.policy_version_id',
      'v.version_type',
      isoText('v.statement_start_at').as('statement_start_at'),
      isoText('v.statement_end_at').as('statement_end_at'),
      'p.decline_code',
      'p.attempts',
      isoText('p.next_attempt_at').as('next_attempt_at'),
      isoText('p.created_at').as('created_at'),
      isoText('p.updated_at').as('updated_at'),
      'p.method_type',
      isoText('p.settled_at').as('settled_at'),
      sql<string>`to_char(${CASH_AT} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as('cash_at'),
    ])
    .where(forTenant(tenant, 'p'))
    .where('p.purpose', '<>', 'intent')
    .where(CASH_AT, '>=', range.fromAt)
    .where(CASH_AT, '<', range.toAt);
  if (afterId !== undefined)
    query = query.where(
      sql<boolean>`(${CASH_AT}, p.id) > (select coalesce(a.settled_at, a.created_at), a.id from payments a where a.id = ${afterId})`,
    );
  const rows = await query.orderBy(CASH_AT).orderBy('p.id').limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    purpose: r.purpose,
    status: r.status,
    amountPence: r.amount_pence,
    refundedPence: r.refunded_pence,
    currency: r.currency.trim(),
    provider: r.provider,
    providerPaymentId: r.provider_payment_id,
    refundOf: r.refund_of,
    policyReference: r.policy_reference,
    policyVersionId: r.policy_version_id,
    versionType: r.version_type,
    statementStartAt: r.statement_start_at,
    statementEndAt: r.statement_end_at,
    declineCode: r.decline_code,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    methodType: r.method_type,
    settledAt: r.settled_at,
    cashAt: r.cash_at,
  }));
}
