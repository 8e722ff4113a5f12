import type { Executor } from '../../schema.ts';
import type { ChangeFeed } from '../../platform/db/change-feed.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import type { AccountService } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import {
  policyAddedEmail,
  policyAdjustedEmail,
  policyCancelledEmail,
  policyLapsedEmail,
  policyRenewedEmail,
  welcomeEmail,
  type NotificationService,
  type RenderedEmail,
} from '../notifications/index.ts';
import { noPaymentHooks, type PolicyPaymentHooks } from './payment-hooks.ts';
import { generatePolicyReference } from './policy-reference.ts';
import { createPolicyRowCache, type PolicyRead } from './policy-row-cache.ts';
import type { ProductSummary } from '../products/index.ts';
import {
  appendVersion,
  findPolicy,
  insertPolicy,
  listPoliciesOfUser,
  listTermsEnded,
  listVersions,
  lockPolicy,
  setBilledThrough,
  setRenewalTerms,
  supersedeVersions,
  type PolicyRecord,
} from './policy-repository.ts';
import type { PolicyInput, PolicyResponse, RenewalInput, RenewalView } from './policy-schemas.ts';
import { londonDateOf, normalisePolicyInput, validatePolicyInput } from './policy-validation.ts';
import {
  isLive,
  nextTerm,
  renewedSnapshot,
  statusAt,
  termEndAction,
  termsAt,
  versionView,
  type PolicySnapshot,
  type RenewalTerms,
  type Term,
  type VersionRecord,
} from './policy-versions.ts';

type Db = Executor;

export const END_TERMS_QUEUE = 'policies.end-terms';

export interface CancelInput {
  readonly effective_date?: number | undefined;
  readonly reason?: string | undefined;
  /** Pounds; positive refunds the policyholder, negative charges them. Absent: calculated from pricing. */
  readonly payment_amount?: number | undefined;
}

const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);
const fromSeconds = (s: number): Date => new Date(s * 1000);
const startOf = (version: VersionRecord): number => version.snapshot.policy.start_date;

/** The term in force at `at` and a renewal stored after it; a policy always has a term. */
function termsOf(
  reference: string,
  versions: readonly VersionRecord[],
  at: Date,
): { current: Term<VersionRecord>; next: Term<VersionRecord> | undefined } {
  const terms = termsAt(versions, at, startOf);
  if (terms === undefined) throw new AppError('INTERNAL', `policy ${reference} has no terms`);
  return terms;
}

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
interface Built {
  readonly view: PolicyResponse;
  readonly shownFromMs: number;
  readonly changesAtMs: number;
  readonly continues: boolean;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError(
    'VALIDATION_FAILED',
    `The policy is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    { errors },
  );
}

function snapshotOf(input: PolicyInput, reference: string, createdAtSeconds: number): PolicySnapshot {
  const { effective_date: _effective, backfill: _backfill, ...rest } = normalisePolicyInput(input);
  return { ...rest, policy: { ...rest.policy, policy_reference: reference, created_at: createdAtSeconds } };
}

/** Policies and their versions: creation with the policyholder's account, adjustment, cancellation, renewal, lapse. */
export function createPolicyService(deps: {
  db: Db;
  clock: Clock;
  jobs: Jobs;
  accounts: AccountService;
  notifications: NotificationService;
  payments?: PolicyPaymentHooks;
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
}) {
  const { db, clock, jobs, accounts, notifications } = deps;
  const payments = deps.payments ?? noPaymentHooks;
  const onEnded = deps.onEnded ?? (() => Promise.resolve());
  const checkProduct = deps.checkProduct ?? (() => Promise.resolve());
  const describeProduct = deps.describeProduct ?? (() => Promise.resolve(null));
  // NOTE: the product is added to a view when it is answered, never kept in `views`: products change
  // apart from the policy row that keys the cache.
  const withProduct = async (trx: Db, tenant: Tenant, view: PolicyResponse): Promise<PolicyResponse> => ({
    ...view,
    product: await describeProduct(trx, tenant, view.policy.product_reference, clock.now()),
  });
  const rows = createPolicyRowCache<Built>(deps.changes);
  jobs.define({ name: END_TERMS_QUEUE, options: { retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 } });

  /**
   * The policy object: the term in force now (a renewal written early waits for its start and shows
   * as `renewal`), with every version. Also says over which times the term shown is the one in force
   * and whether the cover goes on past the term's end, for `currentView`'s cache.
   */
  async function build(
    trx: Db,
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

  async function view(
    trx: Db,
    tenant: Tenant,
    policy: PolicyRecord,
    versions?: VersionRecord[],
  ): Promise<PolicyResponse> {
    return withProduct(trx, tenant, (await build(trx, tenant, policy, versions)).view);
  }

  /**
   * Reads outside a transaction reuse the view built for the same policy row state (every column of
   * the row read), kept in the row cache: it is dropped, in every process, by the notification of any
   * write to the tables it was built from (the policy row, its versions, its payments, the account), and
   * serves for as long as the term it shows is the one in force (until a stored renewal starts). Only
   * the status is worked out afresh.
   */
  async function currentView(
    read: PolicyRead,
    tenant: Tenant,
    policy: PolicyRecord,
  ): Promise<PolicyResponse> {
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
  }

  /**
   * A live policy locked for a change, its versions, and its terms as they stand now. A renewal may
   * also take a lapsed policy (`lapsed`), to continue its cover.
   */
  async function locked(trx: Db, tenant: Tenant, reference: string, now: Date, lapsed = false) {
    const policy = await lockPolicy(trx, tenant, reference);
    if (policy === undefined) throw notFound('policy');
    if (!isLive(policy.status) && !(lapsed && policy.status === 'lapsed'))
      throw new AppError('POLICY_NOT_ACTIVE', `The policy is ${policy.status}`);
    const versions = await listVersions(trx, policy.id);
    return { policy, versions, ...termsOf(reference, versions, now) };
  }

  async function create(tenant: Tenant, input: PolicyInput): Promise<PolicyResponse> {
    // An ended term is refused before any work (the processor call, the password hash).
    const now = clock.now();
    const ended = input.policy.end_date * 1000 <= now.getTime();
    if (ended && input.backfill !== true) {
      throw new AppError(
        'POLICY_TERM_ENDED',
        `The term ended at ${fromSeconds(input.policy.end_date).toISOString()}: send an end_date in the future, or "backfill": true to bring over a policy as it stood`,
        {
          errors: [
            { path: '/body/policy/end_date', message: 'must be in the future (or send backfill: true)' },
          ],
        },
      );
    }
    // NOTE: the processor is asked before the transaction opens: no row lock waits on the network.
    const binding = await payments.verifyBinding(tenant, input.payment, input.pricing.upfront_premium);
    const password = await accounts.preparePassword();
    return inTransaction(db, async (trx) => {
      await checkProduct(trx, tenant, input.policy.product_reference);
      const outcome = await accounts.createOrJoin(
        trx,
        tenant,
        {
          email: input.proposer.email,
          firstNames: input.proposer.first_names,
          lastNames: input.proposer.last_names,
        },
        password,
      );
      let policy: PolicyRecord | undefined;
      for (let attempt = 0; policy === undefined; attempt++) {
        if (attempt === 10) throw new AppError('INTERNAL', 'could not allocate a policy reference');
        policy = await insertPolicy(trx, tenant, {
          reference: generatePolicyReference(),
          userId: outcome.account.id,
          startAt: fromSeconds(input.policy.start_date),
          endAt: fromSeconds(input.policy.end_date),
          autoRenew: input.policy.auto_renew ?? false,
          at: now,
        });
      }
      const snapshot = snapshotOf(input, policy.policyReference, input.policy.created_at ?? seconds(now));
      const version = await appendVersion(trx, policy, {
        versionType: 'nb',
        snapshot,
        effectiveAt: fromSeconds(snapshot.policy.start_date),
        at: now,
        status: 'active',
        term: 1,
      });
      if (binding !== undefined) {
        await payments.recordBinding(
          trx,
          tenant,
          binding,
          {
            policyId: policy.id,
            policyVersionId: version.id,
            userId: outcome.account.id,
          },
          'new_business',
        );
      }
      const scope = { companyId: tenant.companyId, environment: tenant.environment };
      await recordEvent(
        trx,
        scope,
        'policy.created',
        {
          policy_reference: policy.policyReference,
          policy_version_reference: version.id,
          user_reference: outcome.account.userReference,
        },
        now,
      );
      const email =
        outcome.kind === 'created'
          ? welcomeEmail({
              signInUrl: await deps.signInUrl?.(trx, tenant),
              firstNames: outcome.account.firstNames,
              username: outcome.account.username,
              temporaryPassword: outcome.temporaryPassword,
              policyReference: policy.policyReference,
              expiresOn: outcome.account.temporaryPasswordExpiresAt?.toISOString().slice(0, 10) ?? '',
            })
          : policyAddedEmail({
              firstNames: outcome.account.firstNames,
              username: outcome.account.username,
              policyReference: policy.policyReference,
            });
      await notifications.queueEmail(
        trx,
        scope,
        outcome.kind === 'created' ? 'welcome' : 'policy-added',
        outcome.account.email,
        email,
      );
      if (ended) {
        // A term brought over after its end is history: it lapsed at its end, nothing more is billed
        // here, and the policyholder is not told of a lapse that happened elsewhere.
        const lapse = await appendVersion(
          trx,
          { ...policy, versionCount: 1 },
          {
            versionType: 'ls',
            snapshot,
            effectiveAt: fromSeconds(snapshot.policy.end_date),
            at: now,
            status: 'lapsed',
            term: 1,
            renewalTerms: null,
          },
        );
        await setBilledThrough(trx, policy.id, fromSeconds(snapshot.policy.end_date));
        await recordEvent(
          trx,
          scope,
          'policy.lapsed',
          {
            policy_reference: policy.policyReference,
            policy_version_reference: lapse.id,
            effective_date: fromSeconds(snapshot.policy.end_date).toISOString(),
          },
          now,
        );
        return view(trx, tenant, { ...policy, status: 'lapsed', versionCount: 2 }, [version, lapse]);
      }
      return view(trx, tenant, { ...policy, versionCount: 1 }, [version]);
    });
  }

  /** Emails the policyholder about a change to their policy, in the caller's transaction. */
  async function tellHolder(
    trx: Executor,
    tenant: Tenant,
    policy: { userId: string },
    template: string,
    email: (holder: { firstNames: string }) => RenderedEmail,
  ): Promise<void> {
    const holder = await trx
      .selectFrom('users')
      .select(['email', 'first_names'])
      .where('id', '=', policy.userId)
      .executeTakeFirst();
    if (holder === undefined) return;
    await notifications.queueEmail(
      trx,
      { companyId: tenant.companyId, environment: tenant.environment },
      template,
      holder.email,
      email({ firstNames: holder.first_names }),
    );
  }

  async function adjust(tenant: Tenant, reference: string, input: PolicyInput): Promise<PolicyResponse> {
    const now = clock.now();
    return inTransaction(db, async (trx) => {
      const { policy, versions, current, next } = await locked(trx, tenant, reference, now);
      await checkProduct(trx, tenant, input.policy.product_reference);
      // The term adjusted: a stored renewal when the body names its start, else the term in force.
      // Adjusting the term in force keeps the renewal, which the policy row goes on describing.
      const target = next !== undefined && input.policy.start_date === startOf(next.latest) ? next : current;
      const latest = target.latest;
      const snapshot = snapshotOf(
        input,
        reference,
        input.policy.created_at ?? versions[0]?.snapshot.policy.created_at ?? seconds(now),
      );
      const effectiveAt =
        input.effective_date === undefined
          ? new Date(Math.max(now.getTime(), snapshot.policy.start_date * 1000))
          : fromSeconds(input.effective_date);
      const version = await appendVersion(trx, policy, {
        versionType: 'mta',
        snapshot,
        effectiveAt,
        at: now,
        status: 'active',
        term: target.term,
        ...(target === current && next !== undefined ? { rowTerm: next.latest.snapshot } : {}),
      });
      const settlement = await payments.settleChange(trx, tenant, {
        kind: 'adjustment',
        policyId: policy.id,
        policyVersionId: version.id,
        previous: latest.snapshot,
        next: snapshot,
        effectiveAt,
        paymentAmount: input.payment?.payment_amount,
        termVersionIds: target.versions.map((v) => v.id),
      });
      await recordEvent(
        trx,
        { companyId: tenant.companyId, environment: tenant.environment },
        'policy.adjusted',
        {
          policy_reference: reference,
          policy_version_reference: version.id,
          effective_date: effectiveAt.toISOString(),
        },
        now,
      );
      await tellHolder(trx, tenant, policy, 'policy-adjusted', (holder) =>
        policyAdjustedEmail({
          ...holder,
          policyReference: reference,
          effectiveOn: londonDateOf(seconds(effectiveAt)),
          settlement: settlement === undefined ? undefined : { ...settlement, currency: 'GBP' },
        }),
      );
      return view(trx, tenant, { ...policy, versionCount: version.sequence }, [...versions, version]);
    });
  }

  return {
    /** POST /policys: a new policy, or an adjustment when `policy.policy_reference` names an existing one. */
    async submit(tenant: Tenant, input: PolicyInput): Promise<{ created: boolean; policy: PolicyResponse }> {
      const errors = validatePolicyInput(input);
      if (errors.length > 0) throw invalid(errors);
      const reference = input.policy.policy_reference;
      if (reference === undefined) return { created: true, policy: await create(tenant, input) };
      if (input.backfill !== undefined)
        throw invalid([{ path: '/body/backfill', message: 'applies to new policies only' }]);
      return { created: false, policy: await adjust(tenant, reference, input) };
    },

    async get(tenant: Tenant, reference: string): Promise<PolicyResponse> {
      const read = rows.startRead();
      const policy = await rows.byReference(tenant, reference, () => findPolicy(db, tenant, reference));
      if (policy === undefined) throw notFound('policy');
      return currentView(read, tenant, policy);
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
      return currentView(read, tenant, chosen);
    },

    /**
     * The welcome email again, with a new temporary password (the old one stops working): for a
     * policyholder who lost it or let it expire before signing in. One who has chosen a password
     * signs in with it or resets it; sending them a temporary one would lock them out.
     */
    async resendWelcome(tenant: Tenant, reference: string): Promise<{ sent_to: string }> {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const account = await accounts.findById(db, tenant, policy.userId);
      if (account === undefined) throw notFound('policyholder');
      if (!account.passwordIsTemporary)
        throw new AppError(
          'CONFLICT',
          'The policyholder has chosen their own password; they can reset it with "Forgot password" in the app',
        );
      const password = await accounts.preparePassword();
      const now = clock.now();
      await inTransaction(db, async (trx) => {
        const updated = await accounts.resetTemporaryPassword(trx, tenant, account.id, password);
        await recordEvent(
          trx,
          tenant,
          'account.temporary_password_reissued',
          { user_reference: account.userReference },
          now,
        );
        await notifications.queueEmail(
          trx,
          tenant,
          'welcome',
          account.email,
          welcomeEmail({
            signInUrl: await deps.signInUrl?.(trx, tenant),
            firstNames: account.firstNames,
            username: account.username,
            temporaryPassword: password.plain,
            policyReference: policy.policyReference,
            expiresOn: updated?.temporaryPasswordExpiresAt?.toISOString().slice(0, 10) ?? '',
          }),
        );
      });
      return { sent_to: account.email };
    },

    /** References of a policyholder's policies, oldest first. */
    async referencesOf(tenant: Tenant, userId: string): Promise<string[]> {
      return (await listPoliciesOfUser(db, tenant, userId)).map((p) => p.policyReference);
    },

    /** Cancels from `effective_date` (default now; before the start means from inception). */
    async cancel(tenant: Tenant, reference: string, input: CancelInput): Promise<PolicyResponse> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const { policy, versions, current, next } = await locked(trx, tenant, reference, now);
        const requested = input.effective_date ?? seconds(now);
        // The term cancelled: the one in force, whose stored renewal goes with it, unless the date
        // falls in the renewal's own term.
        const target = next !== undefined && requested >= startOf(next.latest) ? next : current;
        const latest = target.latest;
        const { start_date: start, end_date: end } = latest.snapshot.policy;
        if (requested > end) {
          throw new AppError('VALIDATION_FAILED', 'effective_date is after the end of the policy', {
            errors: [{ path: '/body/effective_date', message: 'must not be after the policy end_date' }],
          });
        }
        const effectiveAt = fromSeconds(Math.max(requested, start));
        if (target === current && next !== undefined)
          await supersedeVersions(
            trx,
            next.versions.map((v) => v.id),
            now,
          );
        const version = await appendVersion(trx, policy, {
          versionType: 'cn',
          snapshot: latest.snapshot,
          effectiveAt,
          at: now,
          status: 'cancelled',
          term: target.term,
          reason: input.reason ?? null,
          renewalTerms: null,
        });
        const settlement = await payments.settleChange(trx, tenant, {
          kind: 'cancellation',
          policyId: policy.id,
          policyVersionId: version.id,
          previous: latest.snapshot,
          next: latest.snapshot,
          effectiveAt,
          paymentAmount: input.payment_amount,
          termVersionIds: target.versions.map((v) => v.id),
        });
        await onEnded(trx, tenant, { policyReference: reference, endAt: effectiveAt });
        // NOTE: statements (final statement) and payments (refund) act on this event.
        await recordEvent(
          trx,
          { companyId: tenant.companyId, environment: tenant.environment },
          'policy.cancelled',
          {
            policy_reference: reference,
            policy_version_reference: version.id,
            effective_date: effectiveAt.toISOString(),
            reason: input.reason ?? null,
          },
          now,
        );
        await tellHolder(trx, tenant, policy, 'policy-cancelled', (holder) =>
          policyCancelledEmail({
            ...holder,
            policyReference: reference,
            effectiveOn: londonDateOf(seconds(effectiveAt)),
            settlement: settlement === undefined ? undefined : { ...settlement, currency: 'GBP' },
          }),
        );
        return view(trx, tenant, { ...policy, status: 'cancelled', versionCount: version.sequence }, [
          ...versions.map((v) =>
            target === current && next?.versions.includes(v) ? { ...v, supersededAt: now } : v,
          ),
          version,
        ]);
      });
    },

    /**
     * Renews for the next term. An auto-renewing policy whose term has not ended keeps the terms and
     * renews at `end_date` (the daily job); otherwise the `rn` version is written now.
     */
    async renew(
      tenant: Tenant,
      reference: string,
      input: RenewalInput,
    ): Promise<{ scheduled: boolean; policy: PolicyResponse }> {
      // NOTE: as on creation, the processor is asked before the transaction opens.
      const binding = await payments.verifyBinding(tenant, input.payment, input.pricing.upfront_premium);
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const { policy, versions, current: inForce, next } = await locked(trx, tenant, reference, now, true);
        // The next term follows the term in force; a renewal already stored for it is replaced (it
        // stays in the history, superseded), so a policy has at most one. A lapsed policy renewed from
        // the end of its last term continues its cover: the lapse is superseded (a book brought over
        // with `backfill`, or a late renewal).
        const latest = inForce.latest;
        const current = {
          startDate: latest.snapshot.policy.start_date,
          endDate: latest.snapshot.policy.end_date,
        };
        await checkProduct(trx, tenant, input.policy?.product_reference);
        const sentReference = input.policy?.policy_reference;
        if (sentReference !== undefined && sentReference !== reference)
          throw invalid([
            { path: '/body/policy/policy_reference', message: `must be ${reference}, the policy renewed` },
          ]);
        const term = nextTerm(current, {
          startDate: input.policy?.start_date ?? input.start_date,
          endDate: input.policy?.end_date ?? input.end_date,
        });
        const lapse =
          policy.status === 'lapsed'
            ? versions.findLast((v) => v.versionType === 'ls' && v.supersededAt === null)
            : undefined;
        if (policy.status === 'lapsed' && (lapse === undefined || term.startDate !== current.endDate + 1))
          throw new AppError(
            'POLICY_NOT_ACTIVE',
            'A lapsed policy is renewed only from the end of its last term, with no gap in cover',
          );
        if (term.endDate <= term.startDate || term.startDate < current.startDate) {
          throw new AppError(
            'VALIDATION_FAILED',
            'The renewal term must start after the current one starts and end after it starts',
            {
              errors: [{ path: '/body/end_date', message: 'must be after start_date' }],
            },
          );
        }
        const {
          start_date: _s,
          end_date: _e,
          policy_reference: _r,
          created_at: _c,
          ...policyFields
        } = input.policy ?? {};
        const replaced = Object.fromEntries(
          (['proposer', 'vehicle', 'additional_drivers', 'custom'] as const)
            .filter((block) => input[block] !== undefined)
            .map((block) => [block, input[block]]),
        );
        // The new term is validated and normalised as a new policy is: every failing field listed.
        const candidate = renewedSnapshot(latest.snapshot, {
          pricing: input.pricing,
          ...term,
          replaced,
          policyFields,
        });
        const { policy: candidatePolicy, ...candidateRest } = candidate;
        const asInput = { ...candidateRest, policy: { ...candidatePolicy } } as unknown as PolicyInput;
        delete (asInput.policy as { policy_reference?: string }).policy_reference;
        const errors = validatePolicyInput(asInput);
        if (errors.length > 0) throw invalid(errors);
        const normal = normalisePolicyInput(asInput);
        const terms: RenewalTerms = {
          pricing: normal.pricing,
          ...term,
          replaced: Object.fromEntries(
            Object.keys(replaced).map((block) => [block, normal[block as keyof typeof normal]]),
          ),
          policyFields: Object.fromEntries(
            Object.keys(policyFields).map((field) => [
              field,
              normal.policy[field as keyof typeof normal.policy],
            ]),
          ),
        };
        const scope = { companyId: tenant.companyId, environment: tenant.environment };
        const superseded = [
          ...(next?.versions.map((v) => v.id) ?? []),
          ...(lapse === undefined ? [] : [lapse.id]),
        ];
        await supersedeVersions(trx, superseded, now);
        const counted = versions.map((v) => (superseded.includes(v.id) ? { ...v, supersededAt: now } : v));
        if (
          policy.autoRenew &&
          binding === undefined &&
          next === undefined &&
          now.getTime() < current.endDate * 1000
        ) {
          await setRenewalTerms(trx, policy.id, terms, now);
          await recordEvent(
            trx,
            scope,
            'policy.renewal_scheduled',
            { policy_reference: reference, start_date: fromSeconds(term.startDate).toISOString() },
            now,
          );
          return {
            scheduled: true,
            policy: await view(trx, tenant, { ...policy, renewalTerms: terms }, versions),
          };
        }
        const version = await appendVersion(trx, policy, {
          versionType: 'rn',
          snapshot: renewedSnapshot(latest.snapshot, terms),
          effectiveAt: fromSeconds(term.startDate),
          at: now,
          status: 'active',
          term: inForce.term + 1,
          renewalTerms: null,
        });
        if (binding !== undefined)
          await payments.recordBinding(
            trx,
            tenant,
            binding,
            { policyId: policy.id, policyVersionId: version.id, userId: policy.userId },
            'renewal',
          );
        await recordEvent(
          trx,
          scope,
          'policy.renewed',
          {
            policy_reference: reference,
            policy_version_reference: version.id,
            start_date: fromSeconds(term.startDate).toISOString(),
          },
          now,
        );
        await tellHolder(trx, tenant, policy, 'policy-renewed', (holder) =>
          policyRenewedEmail({
            ...holder,
            policyReference: reference,
            startOn: londonDateOf(term.startDate),
            endOn: londonDateOf(term.endDate),
          }),
        );
        return {
          scheduled: false,
          policy: await view(
            trx,
            tenant,
            { ...policy, status: 'active', versionCount: version.sequence, renewalTerms: null },
            [...counted, version],
          ),
        };
      });
    },

    /**
     * The daily job: every live policy whose term has ended is renewed on its stored terms (when it
     * auto-renews) or lapses. Each policy is decided under its row lock, so a re-run writes nothing new.
     */
    async endTerms(now: Date = clock.now()): Promise<{ renewed: number; lapsed: number }> {
      let renewed = 0;
      let lapsed = 0;
      for (;;) {
        const due = await listTermsEnded(db, now, 200);
        if (due.length === 0) break;
        for (const item of due) {
          const tenant = asTenant(item.companyId, item.environment as DataEnvironment);
          const outcome = await inTransaction(db, async (trx) => {
            const policy = await lockPolicy(trx, tenant, item.reference);
            if (policy === undefined) return 'none' as const;
            const action = termEndAction(
              {
                status: policy.status,
                endAt: policy.currentEndAt,
                autoRenew: policy.autoRenew,
                hasRenewalTerms: policy.renewalTerms !== null,
              },
              now,
            );
            if (action === 'none') return action;
            const versions = await listVersions(trx, policy.id);
            const { current } = termsOf(item.reference, versions, now);
            const latest = current.latest;
            const scope = { companyId: tenant.companyId, environment: tenant.environment };
            if (action === 'renew' && policy.renewalTerms !== null) {
              const version = await appendVersion(trx, policy, {
                versionType: 'rn',
                snapshot: renewedSnapshot(latest.snapshot, policy.renewalTerms),
                effectiveAt: fromSeconds(policy.renewalTerms.startDate),
                at: now,
                status: 'active',
                term: current.term + 1,
                renewalTerms: null,
              });
              await recordEvent(
                trx,
                scope,
                'policy.renewed',
                { policy_reference: item.reference, policy_version_reference: version.id, automatic: true },
                now,
              );
              const renewal = policy.renewalTerms;
              await tellHolder(trx, tenant, policy, 'policy-renewed', (holder) =>
                policyRenewedEmail({
                  ...holder,
                  policyReference: item.reference,
                  startOn: londonDateOf(renewal.startDate),
                  endOn: londonDateOf(renewal.endDate),
                }),
              );
              return action;
            }
            const version = await appendVersion(trx, policy, {
              versionType: 'ls',
              snapshot: latest.snapshot,
              effectiveAt: policy.currentEndAt,
              at: now,
              status: 'lapsed',
              term: current.term,
              renewalTerms: null,
            });
            await onEnded(trx, tenant, { policyReference: item.reference, endAt: policy.currentEndAt });
            await recordEvent(
              trx,
              scope,
              'policy.lapsed',
              {
                policy_reference: item.reference,
                policy_version_reference: version.id,
                effective_date: policy.currentEndAt.toISOString(),
              },
              now,
            );
            await tellHolder(trx, tenant, policy, 'policy-lapsed', (holder) =>
              policyLapsedEmail({
                ...holder,
                policyReference: item.reference,
                endedOn: londonDateOf(seconds(policy.currentEndAt)),
              }),
            );
            return 'lapse' as const;
          });
          if (outcome === 'renew') renewed++;
          if (outcome === 'lapse') lapsed++;
        }
      }
      return { renewed, lapsed };
    },

    async registerWorkers(): Promise<void> {
      await jobs.work(END_TERMS_QUEUE, async () => {
        await this.endTerms();
      });
      await jobs.schedule(END_TERMS_QUEUE, '30 0 * * *', {}, 'Europe/London');
    },
  };
}

export type PolicyService = ReturnType<typeof createPolicyService>;
