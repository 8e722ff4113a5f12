import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { policyCancelledEmail, policyLapsedEmail, policyRenewedEmail } from '../notifications/index.ts';
import {
  fromSeconds,
  invalid,
  locked,
  seconds,
  startOf,
  tellHolder,
  termsOf,
  type PolicyContext,
  type RenewalPriceOutcome,
} from './policy-context.ts';
import { steppedBackTerms } from './no-claims-renewal.ts';
import type { Built, PolicyViews } from './policy-read-service.ts';
import {
  appendVersion,
  listTermsEnded,
  listVersions,
  lockPolicy,
  setRenewalTerms,
  supersedeVersions,
  type PolicyRecord,
} from './policy-repository.ts';
import type { PolicyInput, PolicyResponse, RenewalInput } from './policy-schemas.ts';
import { londonDateOf, normalisePolicyInput, validatePolicyInput } from './rules/policy-validation.ts';
import {
  billedThrough,
  nextTerm,
  renewedSnapshot,
  termConcludedAt,
  termEndAction,
  type PolicySnapshot,
  type RenewalTerms,
  type VersionRecord,
} from './rules/policy-versions.ts';

export interface CancelInput {
  readonly effective_date?: number | undefined;
  readonly reason?: string | undefined;
  /** Pounds; positive refunds the policyholder, negative charges them. Absent: calculated from pricing. */
  readonly payment_amount?: number | undefined;
}

/**
 * The terms a renewal stores: the next term's dates, the pricing, and the blocks and policy fields
 * sent, validated and normalised as a new policy is (every failing field listed).
 */
function renewalTermsOf(
  input: RenewalInput,
  latest: PolicySnapshot,
  term: { startDate: number; endDate: number },
): RenewalTerms {
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
  const candidate = renewedSnapshot(latest, {
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
  return {
    pricing: normal.pricing,
    ...term,
    replaced: Object.fromEntries(
      Object.keys(replaced).map((block) => [block, normal[block as keyof typeof normal]]),
    ),
    policyFields: Object.fromEntries(
      Object.keys(policyFields).map((field) => [field, normal.policy[field as keyof typeof normal.policy]]),
    ),
  };
}

/**
 * The terms an automatic renewal takes: for a policy rated by Milepost, the pricing the rating module
 * gives it (the rate book version in force at the renewal's start, never above the equivalent
 * new-business price: ICOBS 6B.2.1R), or its refusal; any other policy keeps the terms it was given.
 * Either way it is rated, and made, on the no-claims years stepped back for the term's at-fault claims.
 */
async function pricedTerms(
  ctx: PolicyContext<Built>,
  trx: Executor,
  tenant: Tenant,
  policy: { id: string; policyReference: string },
  lastYear: PolicySnapshot,
  terms: RenewalTerms,
  stage: 'notice' | 'renewal',
  now: Date,
): Promise<RenewalTerms | Extract<RenewalPriceOutcome, { kind: 'refused' }>> {
  const stepped = await steppedBackTerms(ctx, trx, tenant, policy.id, lastYear, terms);
  const outcome = await ctx.priceRenewal(trx, tenant, {
    policyId: policy.id,
    policyReference: policy.policyReference,
    renewal: renewedSnapshot(lastYear, stepped),
    lastYear: lastYear.pricing,
    stage,
    ...(stage === 'renewal' ? { notice: terms.pricing } : {}),
    at: now,
  });
  // NOTE: the notice is priced on the years stepped back so far, but the terms it stores keep the years
  // as sent: the renewal steps them back once, for every at-fault claim settled by the term's end.
  const kept = stage === 'renewal' ? stepped : terms;
  if (outcome.kind === 'not_rated') return kept;
  if (outcome.kind === 'refused') return outcome;
  return { ...kept, pricing: outcome.pricing };
}

/**
 * Ends the term of one policy whose end has passed, under its row lock: renews it on its stored
 * terms (when it auto-renews) or lapses it. `none` when there is nothing to do (any more).
 */
async function endTerm(
  ctx: PolicyContext<Built>,
  tenant: Tenant,
  reference: string,
  now: Date,
): Promise<'renew' | 'lapse' | 'none'> {
  const { db, notifications, onEnded } = ctx;
  return inTransaction(db, async (trx) => {
    const policy = await lockPolicy(trx, tenant, reference);
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
    const { current } = termsOf(reference, versions, now);
    const latest = current.latest;
    const scope = { companyId: tenant.companyId, environment: tenant.environment };
    // A rated policy the version in force refuses to renew is not renewed silently: it lapses, and
    // its holder is told (the lapse email); the refusal is stored for staff with its reasons.
    const priced =
      action === 'renew' && policy.renewalTerms !== null
        ? await pricedTerms(ctx, trx, tenant, policy, latest.snapshot, policy.renewalTerms, 'renewal', now)
        : undefined;
    if (priced !== undefined && !('kind' in priced)) {
      const version = await appendVersion(trx, policy, {
        versionType: 'rn',
        snapshot: renewedSnapshot(latest.snapshot, priced),
        effectiveAt: fromSeconds(priced.startDate),
        at: now,
        status: 'active',
        term: current.term + 1,
        renewalTerms: null,
      });
      await recordEvent(
        trx,
        scope,
        'policy.renewed',
        { policy_reference: reference, policy_version_reference: version.id, automatic: true },
        now,
      );
      const renewal = priced;
      await tellHolder(notifications, trx, tenant, policy, 'policy-renewed', (holder) =>
        policyRenewedEmail({
          ...holder,
          policyReference: reference,
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
    await onEnded(trx, tenant, { policyReference: reference, endAt: policy.currentEndAt });
    await recordEvent(
      trx,
      scope,
      'policy.lapsed',
      {
        policy_reference: reference,
        policy_version_reference: version.id,
        effective_date: policy.currentEndAt.toISOString(),
      },
      now,
    );
    await tellHolder(notifications, trx, tenant, policy, 'policy-lapsed', (holder) =>
      policyLapsedEmail({
        ...holder,
        policyReference: reference,
        endedOn: londonDateOf(seconds(policy.currentEndAt)),
      }),
    );
    return 'lapse' as const;
  });
}

/** Cancels from `effective_date` (default now; before the start means from inception). */
async function cancel(
  ctx: PolicyContext<Built>,
  views: PolicyViews,
  tenant: Tenant,
  reference: string,
  input: CancelInput,
): Promise<PolicyResponse> {
  const { db, clock, notifications, payments, onEnded } = ctx;
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
    // NOTE: a statement already issued billed the cover up to its period's end (installments due, the
    // usage of journeys started); a cancellation before that end would leave them billed and not
    // credited, so it is refused and the earliest time accepted named.
    const billed = billedThrough(versions);
    if (billed !== undefined && effectiveAt.getTime() < billed.getTime()) {
      const earliest = `${String(seconds(billed))} (${billed.toISOString()})`;
      throw new AppError(
        'CONFLICT',
        `A statement has billed the policy up to ${billed.toISOString()}: a cancellation takes effect at that time or later`,
        {
          errors: [
            {
              path: '/body/effective_date',
              message: `must not be before ${earliest}, the end of the last statement's period`,
            },
          ],
        },
      );
    }
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
      concludedAt: termConcludedAt(target),
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
    await tellHolder(notifications, trx, tenant, policy, 'policy-cancelled', (holder) =>
      policyCancelledEmail({
        ...holder,
        policyReference: reference,
        effectiveOn: londonDateOf(seconds(effectiveAt)),
        settlement: settlement === undefined ? undefined : { ...settlement, currency: 'GBP' },
      }),
    );
    return views.view(trx, tenant, { ...policy, status: 'cancelled', versionCount: version.sequence }, [
      ...versions.map((v) =>
        target === current && next?.versions.includes(v) ? { ...v, supersededAt: now } : v,
      ),
      version,
    ]);
  });
}

/**
 * Stores the terms of an automatic renewal, to be made at the term's end by the daily job. A policy
 * rated by Milepost is priced now, for its notice (the notice states the price it will renew at);
 * one its rate book refuses is not scheduled (409, with the version's reasons).
 */
async function scheduleRenewal(
  ctx: PolicyContext<Built>,
  views: PolicyViews,
  trx: Executor,
  tenant: Tenant,
  given: {
    policy: PolicyRecord;
    versions: VersionRecord[];
    latest: PolicySnapshot;
    terms: RenewalTerms;
    now: Date;
  },
): Promise<PolicyResponse> {
  const { policy, versions, latest, terms, now } = given;
  const priced = await pricedTerms(ctx, trx, tenant, policy, latest, terms, 'notice', now);
  if ('kind' in priced) {
    const verb = { unratable: 'cannot rate', declined: 'declines', referred: 'refers' }[priced.outcome];
    throw new AppError(
      'CONFLICT',
      `The rate book version in force at the renewal's start ${verb} the renewal: ${priced.reasons.join('; ')}`,
    );
  }
  await setRenewalTerms(trx, policy.id, priced, now);
  await recordEvent(
    trx,
    { companyId: tenant.companyId, environment: tenant.environment },
    'policy.renewal_scheduled',
    { policy_reference: policy.policyReference, start_date: fromSeconds(priced.startDate).toISOString() },
    now,
  );
  return views.view(trx, tenant, { ...policy, renewalTerms: priced }, versions);
}

/**
 * Renews for the next term. An auto-renewing policy whose term has not ended keeps the terms and
 * renews at `end_date` (the daily job); otherwise the `rn` version is written now.
 */
async function renew(
  ctx: PolicyContext<Built>,
  views: PolicyViews,
  tenant: Tenant,
  reference: string,
  input: RenewalInput,
): Promise<{ scheduled: boolean; policy: PolicyResponse }> {
  const { db, clock, notifications, payments, checkProduct } = ctx;
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
    const terms = renewalTermsOf(input, latest.snapshot, term);
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
      return {
        scheduled: true,
        policy: await scheduleRenewal(ctx, views, trx, tenant, {
          policy,
          versions,
          latest: latest.snapshot,
          terms,
          now,
        }),
      };
    }
    const made = await steppedBackTerms(ctx, trx, tenant, policy.id, latest.snapshot, terms);
    const version = await appendVersion(trx, policy, {
      versionType: 'rn',
      snapshot: renewedSnapshot(latest.snapshot, made),
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
    await tellHolder(notifications, trx, tenant, policy, 'policy-renewed', (holder) =>
      policyRenewedEmail({
        ...holder,
        policyReference: reference,
        startOn: londonDateOf(term.startDate),
        endOn: londonDateOf(term.endDate),
      }),
    );
    return {
      scheduled: false,
      policy: await views.view(
        trx,
        tenant,
        { ...policy, status: 'active', versionCount: version.sequence, renewalTerms: null },
        [...counted, version],
      ),
    };
  });
}

/**
 * The daily job: every live policy whose term has ended is renewed on its stored terms (when it
 * auto-renews) or lapses. Each policy is decided under its row lock, so a re-run writes nothing new.
 */
async function endTerms(ctx: PolicyContext<Built>, now: Date): Promise<{ renewed: number; lapsed: number }> {
  const { db } = ctx;
  let renewed = 0;
  let lapsed = 0;
  for (;;) {
    const due = await listTermsEnded(db, now, 200);
    if (due.length === 0) break;
    for (const item of due) {
      const tenant = asTenant(item.companyId, item.environment as DataEnvironment);
      const outcome = await endTerm(ctx, tenant, item.reference, now);
      if (outcome === 'renew') renewed++;
      if (outcome === 'lapse') lapsed++;
    }
  }
  return { renewed, lapsed };
}

/** Renewal, cancellation and lapse: how a term ends, and the term that follows it. */
export function createTermEnds(ctx: PolicyContext<Built>, views: PolicyViews) {
  return {
    /** Cancels from `effective_date` (default now; before the start means from inception). */
    cancel: (tenant: Tenant, reference: string, input: CancelInput): Promise<PolicyResponse> =>
      cancel(ctx, views, tenant, reference, input),

    /** Renews for the next term, now or (auto-renewing, before the term ends) at `end_date`. */
    renew: (
      tenant: Tenant,
      reference: string,
      input: RenewalInput,
    ): Promise<{ scheduled: boolean; policy: PolicyResponse }> => renew(ctx, views, tenant, reference, input),

    /** The daily job: renews or lapses every live policy whose term has ended; a re-run writes nothing new. */
    endTerms: (now: Date = ctx.clock.now()): Promise<{ renewed: number; lapsed: number }> =>
      endTerms(ctx, now),
  };
}
