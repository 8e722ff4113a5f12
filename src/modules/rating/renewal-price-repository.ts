import type { Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { Pricing } from '../policies/index.ts';
import type { RatedPricing } from './rules/index.ts';

/** The `renewal_prices` table (migration 0053): one row each time a rated policy's renewal is priced. */
export interface RenewalPriceTable {
  id: Generated<string>;
  company_id: string;
  environment: string;
  policy_id: string;
  policy_reference: string;
  product_id: string;
  product_reference: string;
  rate_book_version_id: string | null;
  stage: RenewalStage;
  outcome: RenewalOutcome;
  start_at: Date;
  rated_on: string | Date;
  cap_applied: boolean;
  capped: Generated<string[]>;
  held_to_notice: Generated<string[]>;
  renewal_yearly_pence: string | number | null;
  new_business_yearly_pence: string | number | null;
  last_year_yearly_pence: string | number | null;
  renewal_pricing: string | RatedPricing | Pricing | null;
  new_business_pricing: string | RatedPricing | null;
  rated_pricing: string | RatedPricing | null;
  last_year_pricing: string | Pricing | null;
  reasons: Generated<string | string[]>;
  priced_at: Date;
}

export type RenewalStage = 'notice' | 'renewal';
export type RenewalOutcome = 'priced' | 'declined' | 'referred' | 'unratable';

/** A renewal price as stored, with the rate book version it was rated on. */
export interface RenewalPriceRecord {
  readonly policyReference: string;
  readonly productReference: string;
  readonly rateBookReference: string | null;
  readonly versionNumber: number | null;
  readonly stage: RenewalStage;
  readonly outcome: RenewalOutcome;
  readonly startAt: Date;
  readonly ratedOn: string;
  readonly capApplied: boolean;
  readonly capped: readonly string[];
  /** The parts held to the notice's price (a renewal that rated higher than its notice said). */
  readonly heldToNotice: readonly string[];
  readonly renewalYearlyPence: number | null;
  readonly newBusinessYearlyPence: number | null;
  readonly lastYearYearlyPence: number | null;
  readonly renewalPricing: Pricing | null;
  readonly newBusinessPricing: RatedPricing | null;
  readonly ratedPricing: RatedPricing | null;
  readonly lastYearPricing: Pricing | null;
  readonly reasons: readonly string[];
  readonly pricedAt: Date;
}

/** What is stored of one pricing (amounts in pence are the yearly estimates). */
export interface NewRenewalPrice {
  readonly policyId: string;
  readonly policyReference: string;
  readonly productId: string;
  readonly productReference: string;
  readonly rateBookVersionId: string | null;
  readonly stage: RenewalStage;
  readonly outcome: RenewalOutcome;
  readonly startAt: Date;
  readonly ratedOn: string;
  readonly capApplied: boolean;
  readonly capped: readonly string[];
  /** The parts held to the notice's price (a renewal that rated higher than its notice said). */
  readonly heldToNotice: readonly string[];
  readonly renewalYearlyPence: number | null;
  readonly newBusinessYearlyPence: number | null;
  readonly lastYearYearlyPence: number | null;
  readonly renewalPricing: Pricing | null;
  readonly newBusinessPricing: RatedPricing | null;
  readonly ratedPricing: RatedPricing | null;
  readonly lastYearPricing: Pricing | null;
  readonly reasons: readonly string[];
  readonly pricedAt: Date;
}

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

export async function insertRenewalPrice(db: Executor, tenant: Tenant, row: NewRenewalPrice): Promise<void> {
  await db
    .insertInto('renewal_prices')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      policy_id: row.policyId,
      policy_reference: row.policyReference,
      product_id: row.productId,
      product_reference: row.productReference,
      rate_book_version_id: row.rateBookVersionId,
      stage: row.stage,
      outcome: row.outcome,
      start_at: row.startAt,
      rated_on: row.ratedOn,
      cap_applied: row.capApplied,
      capped: [...row.capped],
      held_to_notice: [...row.heldToNotice],
      renewal_yearly_pence: row.renewalYearlyPence,
      new_business_yearly_pence: row.newBusinessYearlyPence,
      last_year_yearly_pence: row.lastYearYearlyPence,
      renewal_pricing: json(row.renewalPricing),
      new_business_pricing: json(row.newBusinessPricing),
      rated_pricing: json(row.ratedPricing),
      last_year_pricing: json(row.lastYearPricing),
      reasons: JSON.stringify(row.reasons),
      priced_at: row.pricedAt,
    })
    .execute();
}

const parsed = <T>(value: string | T | null): T | null =>
  value === null ? null : typeof value === 'string' ? (JSON.parse(value) as T) : value;
const pence = (value: string | number | null): number | null => (value === null ? null : Number(value));
const dateText = (value: string | Date): string =>
  typeof value === 'string' ? value.slice(0, 10) : value.toISOString().slice(0, 10);

function pricesQuery(db: Executor, tenant: Tenant) {
  return db
    .selectFrom('renewal_prices as r')
    .leftJoin('rate_book_versions as v', 'v.id', 'r.rate_book_version_id')
    .leftJoin('rate_books as b', 'b.id', 'v.rate_book_id')
    .where(forTenant(tenant, 'r'))
    .selectAll('r')
    .select(['b.rate_book_reference', 'v.version_number']);
}

type PriceRow = Awaited<ReturnType<ReturnType<typeof pricesQuery>['execute']>>[number];

const toRecord = (row: PriceRow): RenewalPriceRecord => ({
  policyReference: row.policy_reference,
  productReference: row.product_reference,
  rateBookReference: row.rate_book_reference,
  versionNumber: row.version_number,
  stage: row.stage,
  outcome: row.outcome,
  startAt: row.start_at,
  ratedOn: dateText(row.rated_on),
  capApplied: row.cap_applied,
  capped: row.capped,
  heldToNotice: row.held_to_notice,
  renewalYearlyPence: pence(row.renewal_yearly_pence),
  newBusinessYearlyPence: pence(row.new_business_yearly_pence),
  lastYearYearlyPence: pence(row.last_year_yearly_pence),
  renewalPricing: parsed<Pricing>(row.renewal_pricing),
  newBusinessPricing: parsed<RatedPricing>(row.new_business_pricing),
  ratedPricing: parsed<RatedPricing>(row.rated_pricing),
  lastYearPricing: parsed<Pricing>(row.last_year_pricing),
  reasons: parsed<string[]>(row.reasons) ?? [],
  pricedAt: row.priced_at,
});

/** Every renewal price of one policy, newest first. */
export async function listPolicyRenewalPrices(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<RenewalPriceRecord[]> {
  const rows = await pricesQuery(db, tenant)
    .where('r.policy_id', '=', policyId)
    .orderBy('r.priced_at', 'desc')
    .orderBy('r.id')
    .execute();
  return rows.map(toRecord);
}

/** The tenant's renewals made at the cap (stage `renewal`) starting in [fromAt, toAt), by start. */
export async function listCappedRenewals(
  db: Executor,
  tenant: Tenant,
  range: { readonly fromAt: Date; readonly toAt: Date },
): Promise<RenewalPriceRecord[]> {
  const rows = await pricesQuery(db, tenant)
    .where('r.stage', '=', 'renewal')
    .where('r.cap_applied', '=', true)
    .where('r.start_at', '>=', range.fromAt)
    .where('r.start_at', '<', range.toAt)
    .orderBy('r.start_at')
    .orderBy('r.policy_reference')
    .execute();
  return rows.map(toRecord);
}
