import type { PolicyInput, PolicyStatus, PolicyVersion, VersionType } from './policy-schemas.ts';

/** The stored snapshot of a version: the normalised policy object with its reference filled in. */
export type PolicySnapshot = Omit<PolicyInput, 'effective_date' | 'policy'> & {
  policy: PolicyInput['policy'] & { policy_reference: string };
};

export interface VersionRecord {
  readonly id: string;
  readonly sequence: number;
  readonly versionType: VersionType;
  readonly snapshot: PolicySnapshot;
  readonly effectiveAt: Date;
  readonly statementStartAt: Date | null;
  readonly statementEndAt: Date | null;
  readonly usagePremiumPence: number | null;
  readonly createdAt: Date;
}

export type StoredStatus = 'active' | 'cancelled' | 'lapsed';

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** A version as the interface's version table shows it: denormalised fields, ISO dates, nulls for unknowns. */
export function versionView(policyReference: string, version: VersionRecord): PolicyVersion {
  const { policy, proposer, vehicle, pricing } = version.snapshot;
  return {
    version_type: version.versionType,
    policy_reference: policyReference,
    policy_version_reference: version.id,
    quote_reference: pricing.quote_reference ?? null,
    usage: policy.usage,
    vehicle_reg: vehicle.reg,
    address_postcode: policy.address.postcode,
    email: proposer.email,
    proposer_first_names: proposer.first_names,
    proposer_last_names: proposer.last_names,
    inception_date: policy.inception_date === undefined ? null : iso(policy.inception_date),
    effective_date: version.effectiveAt.toISOString(),
    start_date: iso(policy.start_date),
    end_date: iso(policy.end_date),
    upfront_rate: pricing.upfront_rate ?? null,
    subscription_rate: pricing.subscription_rate ?? null,
    usage_rate: pricing.usage_rate,
    upfront_premium: pricing.upfront_premium,
    subscription_premium: pricing.subscription_premium,
    usage_premium:
      version.versionType === 'st' && version.usagePremiumPence !== null
        ? version.usagePremiumPence / 100
        : (pricing.usage_premium ?? null),
    ipt_rate: pricing.ipt_rate ?? null,
    commission_rate: pricing.commission_rate ?? null,
    statement_start_date: version.statementStartAt?.toISOString() ?? null,
    statement_end_date: version.statementEndAt?.toISOString() ?? null,
    created_at: version.createdAt.toISOString(),
  };
}

/** The status clients see: a live policy is `pending` until its term starts. */
export function statusAt(stored: StoredStatus, startDateSeconds: number, now: Date): PolicyStatus {
  if (stored !== 'active') return stored;
  return now.getTime() < startDateSeconds * 1000 ? 'pending' : 'active';
}

/** Only a live policy can be adjusted, cancelled or renewed. */
export const isLive = (status: StoredStatus): boolean => status === 'active';

export interface RenewalTerms {
  readonly pricing: PolicyInput['pricing'];
  readonly startDate: number;
  readonly endDate: number;
}

/**
 * The next term: starts where the current ends unless told otherwise, and lasts as long as the
 * current one unless an end is given. Dates are UNIX seconds.
 */
export function nextTerm(
  current: { startDate: number; endDate: number },
  requested: { startDate?: number | undefined; endDate?: number | undefined },
) {
  const startDate = requested.startDate ?? current.endDate;
  const endDate = requested.endDate ?? startDate + (current.endDate - current.startDate);
  return { startDate, endDate };
}

/** The snapshot of a renewal: the latest snapshot with the new term's dates, pricing and policy year. */
export function renewedSnapshot(latest: PolicySnapshot, terms: RenewalTerms): PolicySnapshot {
  const snapshot = structuredClone(latest);
  snapshot.policy.start_date = terms.startDate;
  snapshot.policy.end_date = terms.endDate;
  snapshot.policy.policy_year = (latest.policy.policy_year ?? 1) + 1;
  snapshot.pricing = structuredClone(terms.pricing);
  delete snapshot.payment;
  return snapshot;
}

/** What the daily job does with a live policy whose term has ended: renew on stored terms, or lapse. */
export function termEndAction(
  policy: { status: StoredStatus; endAt: Date; autoRenew: boolean; hasRenewalTerms: boolean },
  now: Date,
): 'renew' | 'lapse' | 'none' {
  if (policy.status !== 'active' || policy.endAt.getTime() > now.getTime()) return 'none';
  return policy.autoRenew && policy.hasRenewalTerms ? 'renew' : 'lapse';
}
