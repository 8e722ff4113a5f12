import type { Executor } from '../../schema.ts';
import type { ChangeFeed } from '../../platform/db/change-feed.ts';
import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { findPolicyholderContact, type AccountService } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import type { NotificationService, RenderedEmail } from '../notifications/index.ts';
import type { ProductSummary } from '../products/index.ts';
import { noPaymentHooks, type PolicyPaymentHooks } from './payment-hooks.ts';
import { noQuoteHooks, type PolicyQuoteHooks } from './quote-hooks.ts';
import { createPolicyRowCache, type PolicyRowCache } from './policy-row-cache.ts';
import { listVersions, lockPolicy } from './policy-repository.ts';
import type { PolicyInput, Pricing } from './policy-schemas.ts';
import { normalisePolicyInput } from './rules/policy-validation.ts';
import {
  isLive,
  termsAt,
  type PolicySnapshot,
  type Term,
  type VersionRecord,
} from './rules/policy-versions.ts';

/*
 * What the policy service's use cases share: their dependencies with the defaults filled in, and the
 * helpers every family uses (the terms of a policy, a policy locked for a change, an email to its
 * holder). The families are new business and adjustments (new-business-service.ts), renewal,
 * cancellation and lapse (term-end-service.ts) and reads (policy-read-service.ts).
 */

/** What `createPolicyService` is given. */
export interface PolicyServiceDeps {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  accounts: AccountService;
  notifications: NotificationService;
  payments?: PolicyPaymentHooks;
  /** Binds the company's own quotes named by `pricing.quote_reference` (quotes work); none: all are outside ones. */
  quotes?: PolicyQuoteHooks;
  /** In the transaction that cancels or lapses a policy: arranges its final statement (statements work). */
  onEnded?: (trx: Executor, tenant: Tenant, ended: { policyReference: string; endAt: Date }) => Promise<void>;
  /** Lets reads keep policy rows in memory (see policy-row-cache.ts); without it every read queries. */
  changes?: ChangeFeed;
  /**
   * Where a new policyholder signs in: the web app's address for the company, put in the welcome email;
   * none: the email names no address.
   */
  signInUrl?: (trx: Executor, tenant: Tenant) => Promise<string | undefined>;
  /** Refuses a `product_reference` the company has not registered (products work); none: any is taken. */
  checkProduct?: (trx: Executor, tenant: Tenant, reference: string | undefined) => Promise<void>;
  /** The registered product a policy names, as in force at a time (products work); none: null. */
  describeProduct?: (
    db: Executor,
    tenant: Tenant,
    reference: string | undefined,
    at: Date,
  ) => Promise<ProductSummary | null>;
  /**
   * Prices an automatic renewal of a policy rated by Milepost (rating work), in the transaction that
   * stores or makes it; none: every renewal keeps the pricing it was given.
   */
  priceRenewal?: (trx: Executor, tenant: Tenant, renewal: RenewalToPrice) => Promise<RenewalPriceOutcome>;
  /**
   * The policy's at-fault claims settled in [fromAt, toAt) (claims work), which step back the no-claims
   * years at renewal; none: no claim steps them back.
   */
  atFaultClaims?: (trx: Executor, policyId: string, range: { fromAt: Date; toAt: Date }) => Promise<number>;
}

/** An automatic renewal to price: for its notice (stored before the term ends) or as it is made. */
export interface RenewalToPrice {
  readonly policyId: string;
  readonly policyReference: string;
  /** The next term as it would renew: its dates, policy year and blocks, with the pricing it was given. */
  readonly renewal: PolicySnapshot;
  /** The pricing of the term it follows ("last year's price"). */
  readonly lastYear: Pricing;
  readonly stage: 'notice' | 'renewal';
  /** At the renewal: the pricing its notice stated (the stored terms'), which it may not exceed. */
  readonly notice?: Pricing;
  readonly at: Date;
}

/**
 * `not_rated`: the policy's pricing names no rate book version of the company, so the renewal keeps
 * its pricing. `priced`: the renewal takes `pricing`. `refused`: the version in force at the
 * renewal's start declines or refers it, or cannot rate it; the renewal is not made automatically.
 */
export type RenewalPriceOutcome =
  | { readonly kind: 'not_rated' }
  | { readonly kind: 'priced'; readonly pricing: Pricing }
  | {
      readonly kind: 'refused';
      readonly outcome: 'declined' | 'referred' | 'unratable';
      readonly reasons: readonly string[];
    };

/** The dependencies with their defaults, and the row cache of reads (`Built` is what a read keeps). */
export interface PolicyContext<Built> {
  readonly db: Executor;
  readonly clock: Clock;
  readonly accounts: AccountService;
  readonly notifications: NotificationService;
  readonly payments: PolicyPaymentHooks;
  readonly quotes: PolicyQuoteHooks;
  readonly onEnded: NonNullable<PolicyServiceDeps['onEnded']>;
  readonly checkProduct: NonNullable<PolicyServiceDeps['checkProduct']>;
  readonly describeProduct: NonNullable<PolicyServiceDeps['describeProduct']>;
  readonly signInUrl: PolicyServiceDeps['signInUrl'];
  readonly priceRenewal: NonNullable<PolicyServiceDeps['priceRenewal']>;
  readonly atFaultClaims: NonNullable<PolicyServiceDeps['atFaultClaims']>;
  readonly rows: PolicyRowCache<Built>;
}

export function policyContext<Built>(deps: PolicyServiceDeps): PolicyContext<Built> {
  return {
    db: deps.db,
    clock: deps.clock,
    accounts: deps.accounts,
    notifications: deps.notifications,
    payments: deps.payments ?? noPaymentHooks,
    quotes: deps.quotes ?? noQuoteHooks,
    onEnded: deps.onEnded ?? (() => Promise.resolve()),
    checkProduct: deps.checkProduct ?? (() => Promise.resolve()),
    describeProduct: deps.describeProduct ?? (() => Promise.resolve(null)),
    signInUrl: deps.signInUrl,
    priceRenewal: deps.priceRenewal ?? (() => Promise.resolve({ kind: 'not_rated' as const })),
    atFaultClaims: deps.atFaultClaims ?? (() => Promise.resolve(0)),
    rows: createPolicyRowCache<Built>(deps.changes),
  };
}

export const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);
export const fromSeconds = (s: number): Date => new Date(s * 1000);
export const startOf = (version: VersionRecord): number => version.snapshot.policy.start_date;

/** The term in force at `at` and a renewal stored after it; a policy always has a term. */
export function termsOf(
  reference: string,
  versions: readonly VersionRecord[],
  at: Date,
): { current: Term<VersionRecord>; next: Term<VersionRecord> | undefined } {
  const terms = termsAt(versions, at, startOf);
  if (terms === undefined) throw new AppError('INTERNAL', `policy ${reference} has no terms`);
  return terms;
}

export function invalid(errors: FieldError[]): AppError {
  return new AppError(
    'VALIDATION_FAILED',
    `The policy is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    { errors },
  );
}

export function snapshotOf(input: PolicyInput, reference: string, createdAtSeconds: number): PolicySnapshot {
  const { effective_date: _effective, backfill: _backfill, ...rest } = normalisePolicyInput(input);
  return { ...rest, policy: { ...rest.policy, policy_reference: reference, created_at: createdAtSeconds } };
}

/**
 * A live policy locked for a change, its versions, and its terms as they stand now. A renewal may
 * also take a lapsed policy (`lapsed`), to continue its cover.
 */
export async function locked(trx: Executor, tenant: Tenant, reference: string, now: Date, lapsed = false) {
  const policy = await lockPolicy(trx, tenant, reference);
  if (policy === undefined) throw notFound('policy');
  if (!isLive(policy.status) && !(lapsed && policy.status === 'lapsed'))
    throw new AppError('POLICY_NOT_ACTIVE', `The policy is ${policy.status}`);
  const versions = await listVersions(trx, policy.id);
  return { policy, versions, ...termsOf(reference, versions, now) };
}

/** Emails the policyholder about a change to their policy, in the caller's transaction. */
export async function tellHolder(
  notifications: NotificationService,
  trx: Executor,
  tenant: Tenant,
  policy: { userId: string; policyReference: string },
  template: string,
  email: (holder: { firstNames: string; documentsUrl: string | undefined }) => RenderedEmail,
): Promise<void> {
  const holder = await findPolicyholderContact(trx, policy.userId);
  if (holder === undefined) return;
  const scope = { companyId: tenant.companyId, environment: tenant.environment };
  // The change's documents (made by the worker after this commits) are on the web app's documents page.
  const links = await notifications.documentLinks(trx, scope);
  await notifications.queueEmail(
    trx,
    scope,
    template,
    holder.email,
    email({ firstNames: holder.firstNames, documentsUrl: links?.(policy.policyReference) }),
    policy.userId,
  );
}
