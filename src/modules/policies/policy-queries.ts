/**
 * Read-only views of policies for the modules that rate usage against them (journeys, statements):
 * the policy's identity, and each version's term and usage price. Nothing here writes.
 */
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import {
  findPolicyForUsage,
  listPoliciesForUsageOfUser,
  listVersionTerms,
  type PolicyUsageRow,
} from './policy-repository.ts';
import { USAGE_UNITS, type UsageUnit, type VersionType } from './policy-schemas.ts';
import type { StoredStatus } from './rules/policy-versions.ts';

export type { StoredStatus, UsageUnit, VersionType };

/**
 * A policy as usage sees it. `id`, `policyReference` and `userId` never change; `versionCount` changes
 * exactly when a version is appended (in the same transaction), so it tells whether versions read earlier
 * are still all there is.
 */
export type PolicyForUsage = PolicyUsageRow;

/** One version's term and usage price. */
export interface PolicyTermVersion {
  /** The version's id: its `policy_version_reference`. */
  readonly id: string;
  readonly sequence: number;
  readonly versionType: VersionType;
  readonly effectiveAt: Date;
  /** The term in the snapshot (`policy.start_date`, `policy.end_date`), UNIX seconds. */
  readonly startDate: number;
  readonly endDate: number;
  /** Money per `usageUnit` of distance, as exact decimal text (e.g. "0.045"). */
  readonly usageRate: string;
  readonly usageUnit: UsageUnit;
  /** The term the version sets or ends (1, 2, …); null for statements. */
  readonly term: number | null;
  /** Set when the version no longer counts (a replaced renewal, an undone lapse). */
  readonly supersededAt: Date | null;
}

const asUsageUnit = (unit: string | null): UsageUnit => USAGE_UNITS.find((u) => u === unit) ?? 'mile';

/** The tenant's policy under `reference`, or undefined. */
export function findPolicyForUsageByReference(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<PolicyForUsage | undefined> {
  return findPolicyForUsage(db, tenant, reference);
}

/** The policyholder's policies in this tenant, oldest first. */
export function listPoliciesForUsageOfPolicyholder(
  db: Executor,
  tenant: Tenant,
  userId: string,
): Promise<PolicyForUsage[]> {
  return listPoliciesForUsageOfUser(db, tenant, userId);
}

/** Every version of the policy, oldest first, with its term and usage price (`usage_unit` defaulting to mile). */
export async function listPolicyTermVersions(db: Executor, policyId: string): Promise<PolicyTermVersion[]> {
  const rows = await listVersionTerms(db, policyId);
  return rows.map((row) => ({ ...row, usageUnit: asUsageUnit(row.usageUnit) }));
}
