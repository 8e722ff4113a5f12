/** The credit ledger (`policy_credits`): what statements draw on and what voids, goodwill and carried amounts add. */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { VoidedJourney } from './usage-billing.ts';

/**
 * Voids of journeys already billed that no statement has credited yet: each is claimed by its policy's
 * new statement and becomes a credit on the ledger of what was paid for it (its premium less what the
 * product's rules credited of it), in one statement for many policies. Returns them, for the rules.
 */
export async function creditVoidedJourneys(
  trx: Executor,
  statements: ReadonlyArray<{ statementId: string; policyId: string }>,
  at: Date,
): Promise<VoidedJourney[]> {
  if (statements.length === 0) return [];
  const result = await sql<{
    statement_id: string;
    policy_id: string;
    journey_id: string;
    start_at: Date;
    distance_metres: number;
    paid_pence: string;
    uncounted_metres: string;
  }>`
    with voids as (
      update journey_voids v set credited_statement_version_id = s.statement_id
      from unnest(${statements.map((s) => s.statementId)}::uuid[], ${statements.map((s) => s.policyId)}::uuid[])
        as s(statement_id, policy_id)
      where v.policy_id = s.policy_id and v.billed_statement_version_id is not null
        and v.credited_statement_version_id is null
      returning v.id, v.journey_id, v.policy_id, v.company_id, v.environment, v.usage_premium_pence, s.statement_id
    ), paid as (
      select voids.*, j.start_at, j.distance_metres,
        voids.usage_premium_pence - coalesce(cr.pence, 0) as paid_pence, coalesce(cr.uncounted, 0) as uncounted_metres
      from voids
      join journeys j on j.id = voids.journey_id
      left join lateral (
        select sum(r.credit_pence) as pence,
          sum(r.distance_metres) filter (where r.rule <> 'free_distance') as uncounted
        from journey_rule_credits r where r.journey_id = voids.journey_id
      ) cr on true
    ), credited as (
      insert into policy_credits (policy_id, company_id, environment, amount_pence, source, reference, reason, created_at)
      select policy_id, company_id, environment, paid_pence, 'void', id::text, 'voided journey already billed', ${at}
      from paid where paid_pence <> 0
    )
    select statement_id, policy_id, journey_id, start_at, distance_metres, paid_pence, uncounted_metres
    from paid`.execute(trx);
  return result.rows.map((r) => ({
    statementId: r.statement_id,
    policyId: r.policy_id,
    journeyId: r.journey_id,
    startAt: r.start_at,
    distanceMetres: r.distance_metres,
    paidPence: Number(r.paid_pence),
    countedMetres: r.distance_metres - Number(r.uncounted_metres),
  }));
}

/** A policy's credit ledger, newest first: grants (positive) and what statements and refunds used (negative). */
export function listCredits(db: Executor, policyId: string) {
  return db
    .selectFrom('policy_credits')
    .select(['amount_pence', 'source', 'reference', 'reason', 'created_at'])
    .where('policy_id', '=', policyId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Ledger balances of many policies (absent: no entries, a zero balance). */
export async function creditBalances(
  db: Executor,
  policyIds: readonly string[],
): Promise<Map<string, number>> {
  if (policyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('policy_credits')
    .select(['policy_id', sql<string>`sum(amount_pence)::bigint`.as('balance')])
    .where('policy_id', 'in', [...policyIds])
    .groupBy('policy_id')
    .execute();
  return new Map(rows.map((r) => [r.policy_id, Number(r.balance)]));
}

export interface CreditEntry {
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly amountPence: number;
  readonly source: 'void' | 'goodwill' | 'refund' | 'statement' | 'carried_forward';
  readonly reference: string;
  readonly reason?: string | null;
  readonly at: Date;
}

export async function addCredits(trx: Executor, entries: readonly CreditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('policy_credits')
    .values(
      entries.map((entry) => ({
        policy_id: entry.policyId,
        company_id: entry.companyId,
        environment: entry.environment,
        amount_pence: entry.amountPence,
        source: entry.source,
        reference: entry.reference,
        reason: entry.reason ?? null,
        created_at: entry.at,
      })),
    )
    .execute();
}
