import type { Executor } from '../../schema.ts';
import { notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import type { PolicyContext } from './policy-context.ts';
import { startOf, termsOf } from './policy-context.ts';
import type { PolicyRead } from './policy-row-cache.ts';
import { findPolicy, listPoliciesOfUser, listVersions, type PolicyRecord } from './policy-repository.ts';
import type { PolicyResponse, RenewalView } from './policy-schemas.ts';
import { statusAt, versionView, type Term, type VersionRecord } from './rules/policy-versions.ts';

/** The `renewal` of the policy object: an early renewal's term, else terms stored for automatic renewal. */
function renewalView(
  policy: PolicyRecord,
  current: VersionRecord,
  next: Term<VersionRecord> | undefined,
): RenewalView | null {
  if (next !== undefined) {
    const { policy: block, pricing } = next.latest.snapshot;
    return {
      start_date: block.start_date,
      end_date: block.end_date,
      ...(block.policy_year === undefined ? {} : { policy_year: block.policy_year }),
      policy_version_reference: next.latest.id,
      automatic: false,
      pricing,
    };
  }
  const terms = policy.renewalTerms;
  if (terms === null || !policy.autoRenew || policy.status !== 'active') return null;
  return {
    start_date: terms.startDate,
    end_date: terms.endDate,
    policy_year: terms.policyFields?.policy_year ?? (current.snapshot.policy.policy_year ?? 1) + 1,
    policy_version_reference: null,
    automatic: true,
    pricing: terms.pricing,
  };
}

/**
 * A policy object built for reads, with the times over which the term it shows is the one in force
 * and whether the cover goes on past the term's end (for its status, worked out at each read).
 */
export interface Built {
  readonly view: PolicyResponse;
  readonly shownFromMs: number;
  readonly changesAtMs: number;
  readonly continues: boolean;
}

/** The policy object as every use case answers it: built in a transaction, or kept for reads outside one. */
export function createPolicyViews(ctx: PolicyContext<Built>) {
  const { db, clock, accounts, payments, describeProduct, rows } = ctx;
  // NOTE: the product is added to a view when it is answered, never kept in `views`: products change
  // apart from the policy row that keys the cache.
  const withProduct = async (
    trx: Executor,
    tenant: Tenant,
    view: PolicyResponse,
  ): Promise<PolicyResponse> => ({
    ...view,
    product: await describeProduct(trx, tenant, view.policy.product_reference, clock.now()),
  });

  /**
   * The policy object: the term in force now (a renewal written early waits for its start and shows
   * as `renewal`), with every version. Also says over which times the term shown is the one in force
   * and whether the cover goes on past the term's end, for `currentView`'s cache.
   */
  async function build(
    trx: Executor,
    tenant: Tenant,
    policy: PolicyRecord,
    versions?: VersionRecord[],
  ): Promise<Built> {
    // Independent reads, issued together: one round trip on PostgreSQL's pool (PGlite runs them in turn).
    const [all, account, paymentRecords] = await Promise.all([
      versions ?? listVersions(trx, policy.id),
      accounts.findById(trx, tenant, policy.userId),
      payments.listForPolicy(trx, tenant, policy.id),
    ]);
    const now = clock.now();
    const { current, next } = termsOf(policy.policyReference, all, now);
    const ofRenewal = new Set(next?.versions.map((v) => v.id));
    const latest =
      all.filter((v) => !ofRenewal.has(v.id) && v.supersededAt === null).at(-1) ?? current.latest;
    const { policy: block, ...rest } = current.latest.snapshot;
    const renewal = renewalView(policy, current.latest, next);
    const continues = renewal !== null;
    return {
      view: {
        ...rest,
        policy: { ...block, policy_reference: policy.policyReference, policy_ref: policy.policyReference },
        policy_reference: policy.policyReference,
        policy_version_reference: latest.id,
        user_reference: account?.userReference ?? '',
        status: statusAt(policy.status, block, now, continues),
        ...(renewal === null ? {} : { renewal }),
        product: null,
        versions: all.map((v) => versionView(policy.policyReference, v)),
        payments: paymentRecords,
      },
      changesAtMs: next === undefined ? Number.POSITIVE_INFINITY : startOf(next.latest) * 1000,
      shownFromMs:
        startOf(current.latest) * 1000 <= now.getTime() ? startOf(current.latest) * 1000 : -Infinity,
      continues,
    };
  }

  return {
    /** The policy object in the caller's transaction, from the versions given (else read). */
    async view(
      trx: Executor,
      tenant: Tenant,
      policy: PolicyRecord,
      versions?: VersionRecord[],
    ): Promise<PolicyResponse> {
      return withProduct(trx, tenant, (await build(trx, tenant, policy, versions)).view);
    },

    /**
     * Reads outside a transaction reuse the view built for the same policy row state (every column of
     * the row read), kept in the row cache: it is dropped, in every process, by the notification of any
     * write to the tables it was built from (the policy row, its versions, its payments, the account), and
     * serves for as long as the term it shows is the one in force (until a stored renewal starts). Only
     * the status is worked out afresh.
     */
    async currentView(read: PolicyRead, tenant: Tenant, policy: PolicyRecord): Promise<PolicyResponse> {
      const now = clock.now();
      const built = await rows.view(
        read,
        policy,
        (kept) => kept.shownFromMs <= now.getTime() && now.getTime() < kept.changesAtMs,
        () => build(db, tenant, policy),
      );
      return withProduct(db, tenant, {
        ...built.view,
        status: statusAt(policy.status, built.view.policy, now, built.continues),
      });
    },
  };
}

export type PolicyViews = ReturnType<typeof createPolicyViews>;

/** Reads: a policy by reference, a policyholder's policy, a policyholder's references. */
export function createPolicyReads(ctx: PolicyContext<Built>, views: PolicyViews) {
  const { db, rows } = ctx;
  return {
    async get(tenant: Tenant, reference: string): Promise<PolicyResponse> {
      const read = rows.startRead();
      const policy = await rows.byReference(tenant, reference, () => findPolicy(db, tenant, reference));
      if (policy === undefined) throw notFound('policy');
      return views.currentView(read, tenant, policy);
    },

    /**
     * A policyholder's policy: the one named, or their current one (the latest live policy, else the
     * latest). Another policyholder's policy is "not found", never "forbidden".
     */
    async getForPolicyholder(tenant: Tenant, userId: string, reference?: string): Promise<PolicyResponse> {
      const read = rows.startRead();
      const mine = await rows.ofHolder(tenant, userId, () => listPoliciesOfUser(db, tenant, userId));
      const chosen =
        reference === undefined
          ? (mine.filter((p) => p.status === 'active').at(-1) ?? mine.at(-1))
          : mine.find((p) => p.policyReference === reference);
      if (chosen === undefined) throw notFound('policy');
      return views.currentView(read, tenant, chosen);
    },

    /** References of a policyholder's policies, oldest first. */
    async referencesOf(tenant: Tenant, userId: string): Promise<string[]> {
      return (await listPoliciesOfUser(db, tenant, userId)).map((p) => p.policyReference);
    },
  };
}
