import { sql, type Generated, type Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';

export interface StatementTables {
  statements: {
    id: string;
    policy_id: string;
    company_id: string;
    environment: string;
    period_start_at: Date;
    period_end_at: Date;
    billing_date: string | null;
    final: Generated<boolean>;
    journey_count: number;
    distance_metres: number;
    duration_seconds: number;
    usage_premium_pence: number;
    installments: number;
    subscription_premium_pence: number;
    total_premium_pence: number;
    credits_used_pence: number;
    billed_premium_pence: number;
    payment_id: string | null;
    created_at: Date;
  };
  policy_credits: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    amount_pence: number;
    source: 'void' | 'goodwill' | 'refund' | 'statement';
    reference: string;
    reason: string | null;
    created_at: Date;
  };
}

export type StatementRow = Selectable<StatementTables['statements']>;

export interface BilledJourney {
  readonly id: string;
  readonly providerReference: string | null;
  readonly policyReference: string;
  readonly policyVersionId: string;
  readonly route: string;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly distanceMetres: number;
  readonly distanceUnit: string;
  readonly usageRate: string;
  readonly usagePremiumPence: number;
  readonly startLat: number;
  readonly startLng: number;
  readonly endLat: number;
  readonly endLng: number;
  readonly startName: string | null;
  readonly endName: string | null;
  readonly startPostcode: string | null;
  readonly endPostcode: string | null;
  readonly isVoid: boolean;
}

const journeyColumns = [
  'id',
  'provider_reference',
  'policy_reference',
  'policy_version_id',
  'route',
  'start_at',
  'end_at',
  'distance_metres',
  'distance_unit',
  'usage_rate',
  'usage_premium_pence',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_name',
  'end_name',
  'start_postcode',
  'end_postcode',
  'is_void',
] as const;

type JourneyRow = {
  id: string;
  provider_reference: string | null;
  policy_reference: string;
  policy_version_id: string;
  route: string;
  start_at: Date;
  end_at: Date;
  distance_metres: number;
  distance_unit: string;
  usage_rate: string;
  usage_premium_pence: number;
  start_lat: number;
  start_lng: number;
  end_lat: number;
  end_lng: number;
  start_name: string | null;
  end_name: string | null;
  start_postcode: string | null;
  end_postcode: string | null;
  is_void: boolean;
};

const toJourney = (r: JourneyRow): BilledJourney => ({
  id: r.id,
  providerReference: r.provider_reference,
  policyReference: r.policy_reference,
  policyVersionId: r.policy_version_id,
  route: r.route,
  startAt: r.start_at,
  endAt: r.end_at,
  distanceMetres: r.distance_metres,
  distanceUnit: r.distance_unit,
  usageRate: r.usage_rate,
  usagePremiumPence: r.usage_premium_pence,
  startLat: r.start_lat,
  startLng: r.start_lng,
  endLat: r.end_lat,
  endLng: r.end_lng,
  startName: r.start_name,
  endName: r.end_name,
  startPostcode: r.start_postcode,
  endPostcode: r.end_postcode,
  isVoid: r.is_void,
});

/**
 * Marks every unbilled, non-void journey of the policy that started by `endAt` as billed by this
 * statement, in one UPDATE: a journey can only move from unbilled to billed once, so it is billed in
 * exactly one statement (late uploads land in the next one), however statements race.
 */
export async function claimJourneys(
  trx: Executor,
  policyId: string,
  statementId: string,
  endAt: Date,
): Promise<BilledJourney[]> {
  const rows = await trx
    .updateTable('journeys')
    .set({ statement_version_id: statementId })
    .where('policy_id', '=', policyId)
    .where('statement_version_id', 'is', null)
    .where('is_void', '=', false)
    .where('start_at', '<=', endAt)
    .returning(journeyColumns)
    .execute();
  return rows.map(toJourney).sort((a, b) => a.startAt.getTime() - b.startAt.getTime());
}

export async function listStatementJourneys(db: Executor, statementId: string): Promise<BilledJourney[]> {
  const rows = await db
    .selectFrom('journeys')
    .select(journeyColumns)
    .where('statement_version_id', '=', statementId)
    .orderBy('start_at')
    .execute();
  return rows.map(toJourney);
}

export async function lastStatement(trx: Executor, policyId: string): Promise<StatementRow | undefined> {
  return trx
    .selectFrom('statements')
    .selectAll()
    .where('policy_id', '=', policyId)
    .orderBy('period_end_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function insertStatement(trx: Executor, row: StatementRow): Promise<void> {
  await trx.insertInto('statements').values(row).execute();
}

export async function setStatementPayment(
  db: Executor,
  statementId: string,
  paymentId: string,
): Promise<void> {
  await db.updateTable('statements').set({ payment_id: paymentId }).where('id', '=', statementId).execute();
}

export async function findStatement(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<StatementRow | undefined> {
  return db
    .selectFrom('statements')
    .selectAll()
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Statements of a policy, newest first, after the cursor (a period end, exclusive). */
export async function listStatements(
  db: Executor,
  tenant: Tenant,
  policyId: string,
  page: { limit: number; before?: Date | undefined },
): Promise<StatementRow[]> {
  let query = db
    .selectFrom('statements')
    .selectAll()
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('policy_id', '=', policyId)
    .orderBy('period_end_at', 'desc')
    .limit(page.limit);
  if (page.before !== undefined) query = query.where('period_end_at', '<', page.before);
  return query.execute();
}

/** Voids of journeys already billed that no statement has credited yet; claimed for `statementId`. */
export async function claimVoidCredits(
  trx: Executor,
  policyId: string,
  statementId: string,
): Promise<Array<{ id: string; amountPence: number }>> {
  const rows = await trx
    .updateTable('journey_voids')
    .set({ credited_statement_version_id: statementId })
    .where('policy_id', '=', policyId)
    .where('billed_statement_version_id', 'is not', null)
    .where('credited_statement_version_id', 'is', null)
    .returning(['id', 'usage_premium_pence'])
    .execute();
  return rows.map((r) => ({ id: r.id, amountPence: r.usage_premium_pence }));
}

export async function addCredit(
  trx: Executor,
  tenant: { companyId: string; environment: string },
  entry: {
    policyId: string;
    amountPence: number;
    source: 'void' | 'goodwill' | 'refund' | 'statement';
    reference: string;
    reason?: string | null;
    at: Date;
  },
): Promise<void> {
  await trx
    .insertInto('policy_credits')
    .values({
      policy_id: entry.policyId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      amount_pence: entry.amountPence,
      source: entry.source,
      reference: entry.reference,
      reason: entry.reason ?? null,
      created_at: entry.at,
    })
    .execute();
}

export async function creditBalance(db: Executor, policyId: string): Promise<number> {
  const row = await db
    .selectFrom('policy_credits')
    .select(sql<string>`coalesce(sum(amount_pence), 0)::bigint`.as('balance'))
    .where('policy_id', '=', policyId)
    .executeTakeFirstOrThrow();
  return Number(row.balance);
}

/**
 * Live policies whose billing date is `date`: billing day `day`, or any day past the month's end when
 * `date` is the month's last day (29–31 fall on the last day of shorter months). Across tenants.
 */
export async function listDueForBilling(
  db: Executor,
  billingDays: readonly number[],
  billingInstant: Date,
): Promise<Array<{ id: string; reference: string; companyId: string; environment: string }>> {
  const rows = await db
    .selectFrom('policies as p')
    .innerJoin('policy_versions as v', (join) =>
      join.onRef('v.policy_id', '=', 'p.id').onRef('v.sequence', '=', 'p.version_count'),
    )
    .select(['p.id', 'p.policy_reference', 'p.company_id', 'p.environment'])
    .where('p.status', '=', 'active')
    .where('p.current_start_at', '<', billingInstant)
    .where(sql<number>`(v.snapshot->'policy'->>'billing_day_date')::int`, 'in', [...billingDays])
    .orderBy('p.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    reference: r.policy_reference,
    companyId: r.company_id,
    environment: r.environment,
  }));
}
