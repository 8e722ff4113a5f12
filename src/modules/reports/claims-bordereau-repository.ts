/** The claims bordereau's reads: each claim of a tenant with its reserve ledger's sums around a month. */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { ClaimLedgerSums } from './rules/claims-bordereau.ts';

/** A claim as its bordereau row names it, with its sums. */
export interface ClaimLedger {
  readonly id: string;
  readonly policyReference: string;
  readonly underwriterReference: string | null;
  readonly underwriterPolicyReference: string | null;
  readonly state: string;
  readonly source: string;
  readonly occurredAt: Date;
  readonly reportedAt: Date;
  readonly atFault: boolean | null;
  readonly sums: ClaimLedgerSums;
}

interface Row {
  id: string;
  policy_reference: string;
  underwriter_reference: string | null;
  underwriter_policy_reference: string | null;
  state: string;
  source: string;
  occurred_at: Date | string;
  created_at: Date | string;
  at_fault: boolean | null;
  moved_before: number | string;
  moved_in: number | string;
  paid_before: number | string;
  paid_in: number | string;
}

/**
 * Up to `limit` claims of the tenant after `afterId` (claim id order) that have any reserve ledger before
 * `toAt`, with their sums before `fromAt` and within [fromAt, toAt). The caller keeps those on the month's
 * bordereau; `next` is where the next batch starts, null after the last.
 */
export async function readClaimLedgerBatch(
  db: Executor,
  scope: { tenant: Tenant; fromAt: Date; toAt: Date },
  afterId: string | null,
  limit: number,
): Promise<{ claims: ClaimLedger[]; next: string | null }> {
  const { tenant, fromAt, toAt } = scope;
  const after = afterId ?? '00000000-0000-0000-0000-000000000000';
  // NOTE: pence are summed in SQL as bigint and come back as text; a claim's sums stay far inside 2^53.
  const rows = await sql<Row>`
    with claim_ids as (
      select distinct m.claim_id, m.policy_id from claim_reserve_movements m
      where m.company_id = ${tenant.companyId} and m.environment = ${tenant.environment}
        and m.moved_at < ${toAt} and m.claim_id > ${after}
      order by m.claim_id
      limit ${limit}
    )
    select c.id, p.policy_reference,
      v.snapshot #>> '{policy,underwriter_reference}' as underwriter_reference,
      v.snapshot #>> '{policy,underwriter_policy_reference}' as underwriter_policy_reference, c.state,
      c.source, c.occurred_at, c.created_at, c.at_fault,
      (select coalesce(sum(m.amount_pence), 0) from claim_reserve_movements m
        where m.claim_id = c.id and m.policy_id = c.policy_id and m.moved_at < ${fromAt}) as moved_before,
      (select coalesce(sum(m.amount_pence), 0) from claim_reserve_movements m
        where m.claim_id = c.id and m.policy_id = c.policy_id
          and m.moved_at >= ${fromAt} and m.moved_at < ${toAt}) as moved_in,
      (select coalesce(sum(y.amount_pence), 0) from claim_payments y
        where y.claim_id = c.id and y.policy_id = c.policy_id and y.paid_at < ${fromAt}) as paid_before,
      (select coalesce(sum(y.amount_pence), 0) from claim_payments y
        where y.claim_id = c.id and y.policy_id = c.policy_id
          and y.paid_at >= ${fromAt} and y.paid_at < ${toAt}) as paid_in
    from claim_ids i
    join claims c on c.id = i.claim_id and c.policy_id = i.policy_id
    join policies p on p.id = c.policy_id
    left join policy_versions v on v.id = c.policy_version_id and v.policy_id = c.policy_id
    order by c.id`.execute(db);
  const claims = rows.rows.map((r): ClaimLedger => ({
    id: r.id,
    policyReference: r.policy_reference,
    underwriterReference: r.underwriter_reference,
    underwriterPolicyReference: r.underwriter_policy_reference,
    state: r.state,
    source: r.source,
    occurredAt: new Date(r.occurred_at),
    reportedAt: new Date(r.created_at),
    atFault: r.at_fault,
    sums: {
      movedBeforePence: Number(r.moved_before),
      movedInPence: Number(r.moved_in),
      paidBeforePence: Number(r.paid_before),
      paidInPence: Number(r.paid_in),
    },
  }));
  const last = claims.at(-1);
  return { claims, next: claims.length < limit || last === undefined ? null : last.id };
}
