import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { AccountOutcome } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import { policyAddedEmail, policyAdjustedEmail, welcomeEmail } from '../notifications/index.ts';
import {
  fromSeconds,
  invalid,
  locked,
  seconds,
  snapshotOf,
  startOf,
  tellHolder,
  type PolicyContext,
} from './policy-context.ts';
import type { Built, PolicyViews } from './policy-read-service.ts';
import { generatePolicyReference } from './policy-reference.ts';
import {
  appendVersion,
  findPolicy,
  insertPolicy,
  setBilledThrough,
  setPrepaidInstallments,
  type PolicyRecord,
} from './policy-repository.ts';
import type { PolicyInput, PolicyResponse } from './policy-schemas.ts';
import { londonDateOf, validatePolicyInput } from './rules/policy-validation.ts';
import { prepaidInstallments } from './rules/prepaid-installments.ts';
import { termConcludedAt, type PolicySnapshot, type VersionRecord } from './rules/policy-versions.ts';

/** The first term's installments the payment at binding pays (0 without a card payment). */
function prepaidOf(input: PolicyInput): number {
  if (input.payment?.provider_payment_reference === undefined) return 0;
  return prepaidInstallments(input.pricing, input.payment.payment_amount);
}

/** Refuses a term that has ended unless the client says it brings a policy over (`backfill`). */
function refuseEndedTerm(input: PolicyInput, now: Date): boolean {
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
  return ended;
}

/** Inserts the policy under a fresh reference, drawing again on the rare clash. */
async function insertWithReference(
  trx: Executor,
  tenant: Tenant,
  input: PolicyInput,
  userId: string,
  now: Date,
): Promise<PolicyRecord> {
  let policy: PolicyRecord | undefined;
  for (let attempt = 0; policy === undefined; attempt++) {
    if (attempt === 10) throw new AppError('INTERNAL', 'could not allocate a policy reference');
    policy = await insertPolicy(trx, tenant, {
      reference: generatePolicyReference(),
      userId,
      startAt: fromSeconds(input.policy.start_date),
      endAt: fromSeconds(input.policy.end_date),
      autoRenew: input.policy.auto_renew ?? false,
      at: now,
    });
  }
  return policy;
}

/**
 * A term brought over after its end is history: it lapsed at its end, nothing more is billed here,
 * and the policyholder is not told of a lapse that happened elsewhere. Returns the lapse version.
 */
async function lapseBroughtOver(
  trx: Executor,
  tenant: Tenant,
  policy: PolicyRecord,
  snapshot: PolicySnapshot,
  now: Date,
): Promise<VersionRecord> {
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
    { companyId: tenant.companyId, environment: tenant.environment },
    'policy.lapsed',
    {
      policy_reference: policy.policyReference,
      policy_version_reference: lapse.id,
      effective_date: fromSeconds(snapshot.policy.end_date).toISOString(),
    },
    now,
  );
  return lapse;
}

/** The welcome email of a new account, or the "policy added" email of one that joined. */
async function holderEmail(
  ctx: PolicyContext<Built>,
  trx: Executor,
  tenant: Tenant,
  outcome: AccountOutcome,
  policyReference: string,
) {
  const links = await ctx.notifications.documentLinks(trx, tenant);
  const documentsUrl = links?.(policyReference);
  return outcome.kind === 'created'
    ? welcomeEmail({
        signInUrl: await ctx.signInUrl?.(trx, tenant),
        documentsUrl,
        firstNames: outcome.account.firstNames,
        username: outcome.account.username,
        temporaryPassword: outcome.temporaryPassword,
        policyReference,
        expiresOn: outcome.account.temporaryPasswordExpiresAt?.toISOString().slice(0, 10) ?? '',
      })
    : policyAddedEmail({
        firstNames: outcome.account.firstNames,
        username: outcome.account.username,
        policyReference,
        documentsUrl,
      });
}

/** A new policy with its holder's account (created, or joined when the email has one), and its first version. */
async function create(
  ctx: PolicyContext<Built>,
  views: PolicyViews,
  tenant: Tenant,
  input: PolicyInput,
): Promise<PolicyResponse> {
  const { db, clock, accounts, notifications, payments, checkProduct } = ctx;
  // An ended term is refused before any work (the processor call, the password hash).
  const now = clock.now();
  const ended = refuseEndedTerm(input, now);
  // A quote of the company's binds: the policy takes its pricing (checked before the payment is).
  const quoted = await ctx.quotes.priceFor(db, tenant, input, undefined, now);
  if (quoted !== undefined) input = { ...input, pricing: quoted.pricing };
  const prepaid = prepaidOf(input);
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
    const policy = await insertWithReference(trx, tenant, input, outcome.account.id, now);
    if (binding !== undefined && prepaid > 0) await setPrepaidInstallments(trx, policy.id, prepaid);
    const snapshot = snapshotOf(input, policy.policyReference, input.policy.created_at ?? seconds(now));
    const version = await appendVersion(trx, policy, {
      versionType: 'nb',
      snapshot,
      effectiveAt: fromSeconds(snapshot.policy.start_date),
      at: now,
      status: 'active',
      term: 1,
    });
    if (quoted !== undefined)
      await ctx.quotes.bind(trx, quoted.quoteId, { policyId: policy.id, policyVersionId: version.id }, now);
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
    const email = await holderEmail(ctx, trx, tenant, outcome, policy.policyReference);
    await notifications.queueEmail(
      trx,
      scope,
      outcome.kind === 'created' ? 'welcome' : 'policy-added',
      outcome.account.email,
      email,
      outcome.account.id,
    );
    if (ended) {
      const lapse = await lapseBroughtOver(trx, tenant, policy, snapshot, now);
      return views.view(trx, tenant, { ...policy, status: 'lapsed', versionCount: 2 }, [version, lapse]);
    }
    return views.view(trx, tenant, { ...policy, versionCount: 1 }, [version]);
  });
}

/** A mid-term adjustment: an `mta` version with the whole new snapshot, settled with the card. */
async function adjust(
  ctx: PolicyContext<Built>,
  views: PolicyViews,
  tenant: Tenant,
  reference: string,
  input: PolicyInput,
): Promise<PolicyResponse> {
  const { db, clock, notifications, payments, checkProduct } = ctx;
  const now = clock.now();
  // A quote with this `policy_reference` prices the adjustment; the difference is settled as any is.
  const quoted = await ctx.quotes.priceFor(db, tenant, input, reference, now);
  if (quoted !== undefined) input = { ...input, pricing: quoted.pricing };
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
    // Terms kept for an automatic renewal are no version, so no body names them as the term to adjust:
    // a term in force run up to their start would take their place (the policy pending until then,
    // the renewal never made, its price never held to new business). They change by renewing again.
    const automatic = policy.renewalTerms;
    if (target === current && automatic !== null && snapshot.policy.end_date >= automatic.startDate)
      throw new AppError(
        'CONFLICT',
        `The policy renews automatically from ${new Date(automatic.startDate * 1000).toISOString()}: an adjustment changes the term in force, which ends before then; change the renewal with POST /policys/${reference}/renewals`,
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
    if (quoted !== undefined)
      await ctx.quotes.bind(trx, quoted.quoteId, { policyId: policy.id, policyVersionId: version.id }, now);
    const settlement = await payments.settleChange(trx, tenant, {
      kind: 'adjustment',
      policyId: policy.id,
      policyVersionId: version.id,
      previous: latest.snapshot,
      next: snapshot,
      effectiveAt,
      paymentAmount: input.payment?.payment_amount,
      termVersionIds: target.versions.map((v) => v.id),
      concludedAt: termConcludedAt(target),
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
    await tellHolder(notifications, trx, tenant, policy, 'policy-adjusted', (holder) =>
      policyAdjustedEmail({
        ...holder,
        policyReference: reference,
        effectiveOn: londonDateOf(seconds(effectiveAt)),
        settlement: settlement === undefined ? undefined : { ...settlement, currency: 'GBP' },
      }),
    );
    return views.view(trx, tenant, { ...policy, versionCount: version.sequence }, [...versions, version]);
  });
}

/** The welcome email again, with a new temporary password (see `resendWelcome` below). */
async function resendWelcome(
  ctx: PolicyContext<Built>,
  tenant: Tenant,
  reference: string,
): Promise<{ sent_to: string }> {
  const { db, clock, accounts, notifications } = ctx;
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
        signInUrl: await ctx.signInUrl?.(trx, tenant),
        firstNames: account.firstNames,
        username: account.username,
        temporaryPassword: password.plain,
        policyReference: policy.policyReference,
        expiresOn: updated?.temporaryPasswordExpiresAt?.toISOString().slice(0, 10) ?? '',
      }),
      account.id,
    );
  });
  return { sent_to: account.email };
}

/** New business and adjustments: a policy created with its holder's account, a change to its terms. */
export function createNewBusiness(ctx: PolicyContext<Built>, views: PolicyViews) {
  return {
    /** POST /policys: a new policy, or an adjustment when `policy.policy_reference` names an existing one. */
    async submit(tenant: Tenant, input: PolicyInput): Promise<{ created: boolean; policy: PolicyResponse }> {
      const errors = validatePolicyInput(input);
      if (errors.length > 0) throw invalid(errors);
      const reference = input.policy.policy_reference;
      if (reference === undefined) return { created: true, policy: await create(ctx, views, tenant, input) };
      if (input.backfill !== undefined)
        throw invalid([{ path: '/body/backfill', message: 'applies to new policies only' }]);
      return { created: false, policy: await adjust(ctx, views, tenant, reference, input) };
    },

    /**
     * The welcome email again, with a new temporary password (the old one stops working): for a
     * policyholder who lost it or let it expire before signing in. One who has chosen a password
     * signs in with it or resets it; sending them a temporary one would lock them out.
     */
    resendWelcome: (tenant: Tenant, reference: string): Promise<{ sent_to: string }> =>
      resendWelcome(ctx, tenant, reference),
  };
}
