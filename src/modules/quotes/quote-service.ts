import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction, type Prepared } from '../../platform/db/database.ts';
import { batchedCalls } from '../../platform/db/batched-calls.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import { addressThrottleOf, type Throttles } from '../auth/index.ts';
import { newPurchaseSecret, secretMatches } from './quote-secrets.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { quoteReferralDecidedEmail, type NotificationService } from '../notifications/index.ts';
import {
  findPolicy,
  findPolicyReference,
  type PolicyQuoteHooks,
  type QuotedPricing,
} from '../policies/index.ts';
import { isLive, validatePolicyInput } from '../policies/rules/index.ts';
import { findProducts } from '../products/index.ts';
import type { QuoteInput } from '../rating/rules/index.ts';
import {
  decideReferral,
  findQuote,
  findQuoteSettings,
  insertBinding,
  insertQuote,
  listPendingReferrals,
  lockQuotesPastRetention,
  pseudonymiseQuote,
  storeQuote,
  STORE_QUOTE_ARITY,
  upsertQuoteSettings,
  type QuoteRecord,
  type QuoteSettings,
} from './quote-repository.ts';
import {
  bindability,
  expiryOf,
  isPseudonymised,
  newBusinessRiskDifferences,
  notBindableMessage,
  pricingDifferences,
  pseudonymisedInput,
  quotePricing,
  riskDifferences,
  startHasPassed,
} from './rules/index.ts';
import { createQuoteTerms, invalid, quoteOn, type QuoteRequest } from './quote-terms.ts';

export const QUOTE_RETENTION_QUEUE = 'quotes.pseudonymise-unbound';

export interface QuoteServiceDeps {
  readonly db: Executor;
  /** For the one statement a quote on remembered terms is stored with (`storeQuote`). */
  readonly prepared: Prepared;
  readonly clock: Clock;
  readonly jobs: Jobs;
  readonly notifications: NotificationService;
  readonly throttles: Throttles;
  /** Quotes pseudonymised per transaction by the retention job. */
  readonly retentionBatchSize?: number;
}

/** Who asks for a quote: the company's integration (or staff), or the web app with the client id alone. */
export type QuoteCaller = { readonly kind: 'client' } | { readonly kind: 'public'; readonly address: string };

/** Who decides a referral: a staff member. */
export interface ReferralDecider {
  readonly staffId: string;
  readonly email: string;
}

// `validatePolicyInput` checks a whole policy object; a quote has no pricing, so it is given one that
// passes, and any error it could raise about it would not be the quote's.
const NO_PRICING = { usage_rate: 0, upfront_premium: 0, subscription_premium: 0 };

const describe = (errors: readonly FieldError[]): string =>
  errors.map((e) => `${e.path} ${e.message}`).join('; ');

/**
 * What rating a quote needs from its input at `now`, once the input is a valid policy without pricing:
 * 422 naming every invalid field, and a new-business start on a day that has passed (never backdated).
 */
function quoteRequest(input: QuoteInput, now: Date): QuoteRequest {
  const policyErrors = validatePolicyInput({ ...input, pricing: NO_PRICING }).filter(
    (e) => !e.path.startsWith('/body/pricing'),
  );
  if (policyErrors.length > 0) throw invalid('The quote is invalid', policyErrors);
  const policyReference = input.policy.policy_reference ?? null;
  if (policyReference === null && startHasPassed(input.policy.start_date, now))
    throw invalid('The quote is invalid', [
      {
        path: '/body/policy/start_date',
        message: 'is on a day that has passed: new cover starts today at the earliest',
      },
    ]);
  const quotedStart = new Date(input.policy.start_date * 1000);
  return {
    input,
    now,
    // New cover starts when it is bought at the earliest (`boundStartSeconds`): a quote for today is
    // rated on the rate book in force now, not at the day's start.
    startAt: policyReference === null && quotedStart < now ? now : quotedStart,
    policyReference,
  };
}

/** The binding rules as the policies module asks them (see PolicyQuoteHooks). */
export const bindingHooks: PolicyQuoteHooks = {
  async priceFor(executor, tenant, input, policyReference, now): Promise<QuotedPricing | undefined> {
    const reference = input.pricing.quote_reference;
    if (reference === undefined) return undefined;
    const quote = await findQuote(executor, tenant, reference);
    // Not one of the company's quotes: an outside quoting engine's reference, kept as sent.
    if (quote === undefined) return undefined;
    const bindable = bindability(quote, now, policyReference);
    if (!bindable.ok) throw new AppError('QUOTE_NOT_BINDABLE', notBindableMessage(bindable.reason));
    // A pseudonymised quote has expired (bindability says so); this narrows its input for the compiler.
    if (isPseudonymised(quote.input)) throw new AppError('QUOTE_NOT_BINDABLE', notBindableMessage('EXPIRED'));
    // NOTE: the quote's price holds only for the risk, term and product it rated; binding it to
    // another (a longer term, a driver with a ban, another product) would sell that at this price.
    const risk =
      quote.policyReference === null
        ? newBusinessRiskDifferences(quote.input, input, now)
        : riskDifferences(quote.input, input);
    if (risk.length > 0)
      throw new AppError(
        'QUOTE_RISK_MISMATCH',
        `The policy is not the risk the quote rated (ask for a new quote to change it): ${describe(risk)}`,
        { errors: risk },
      );
    const pricing = quotePricing(quote.pricing, {
      quote: quote.reference,
      version: quote.versionReference,
      model: quote.rateBookVersionId,
    });
    const differences = pricingDifferences(input.pricing, pricing);
    if (differences.length > 0)
      throw new AppError(
        'QUOTE_PRICING_MISMATCH',
        `The pricing is not the quote’s: ${describe(differences)}`,
        { errors: differences },
      );
    return { quoteId: quote.id, pricing };
  },

  async bind(trx, quoteId, ids, now): Promise<void> {
    // NOTE: the binding's primary key is the quote: of two policies racing to bind it, the second
    // waits for the first to commit and then finds the row taken; nothing is checked first.
    const bound = await insertBinding(trx, { quoteId, ...ids, at: now });
    if (!bound) throw new AppError('QUOTE_NOT_BINDABLE', notBindableMessage('BOUND'));
  },
};

/** Approves or declines a pending referral with a reason, and emails the applicant, in one transaction. */
async function decideReferralOf(
  { db, clock, notifications }: QuoteServiceDeps,
  tenant: Tenant,
  reference: string,
  decider: ReferralDecider,
  decision: { outcome: 'approve' | 'decline'; reason: string },
): Promise<QuoteRecord> {
  const now = clock.now();
  return inTransaction(db, async (trx) => {
    const quote = await findQuote(trx, tenant, reference, { lock: true });
    if (quote === undefined) throw notFound('quote');
    if (quote.referralStatus !== 'pending')
      throw new AppError(
        'CONFLICT',
        quote.referralStatus === null
          ? 'The quote was not referred: only a referred quote is approved or declined'
          : `The referral was ${quote.referralStatus} already`,
      );
    const status = decision.outcome === 'approve' ? 'approved' : 'declined';
    // NOTE: a referred quote cannot be bound while it waits, so an approval gives the applicant the
    // company's whole validity from the decision (an approval after the quote's expiry still binds).
    const { validityDays } = await findQuoteSettings(trx, tenant.companyId);
    const approvedUntil = expiryOf(now, validityDays);
    const expiresAt =
      status === 'approved' && approvedUntil > quote.expiresAt ? approvedUntil : quote.expiresAt;
    await decideReferral(trx, quote.id, {
      status,
      reason: decision.reason,
      decidedBy: `staff:${decider.email}`,
      staffId: decider.staffId,
      at: now,
      expiresAt,
    });
    if (!isPseudonymised(quote.input)) {
      const scope = { companyId: tenant.companyId, environment: tenant.environment };
      await notifications.queueEmail(
        trx,
        scope,
        `quote-referral-${status}`,
        quote.input.proposer.email,
        quoteReferralDecidedEmail({
          firstNames: quote.input.proposer.first_names,
          quoteReference: quote.reference,
          outcome: status,
          reason: decision.reason,
          // The last whole day before it expires (expires_at is exclusive).
          bindableUntil: londonDate(new Date(expiresAt.getTime() - 1)),
        }),
      );
    }
    const decided = await findQuote(trx, tenant, reference);
    if (decided === undefined) throw notFound('quote');
    return decided;
  });
}

type DecideArgs = Parameters<typeof decideReferralOf> extends [unknown, ...infer Rest] ? Rest : never;

/**
 * Pseudonymises quotes never bound whose company's retention has passed (and that have expired), in
 * batches of `retentionBatchSize`, each its own transaction. Idempotent. Returns how many.
 */
async function pseudonymiseUnbound(db: Executor, batchSize: number, now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await inTransaction(db, async (trx) => {
      const rows = await lockQuotesPastRetention(trx, now, batchSize);
      for (const row of rows) await pseudonymiseQuote(trx, row.id, pseudonymisedInput(row.input), now);
      return rows.length;
    });
    total += done;
    if (done < batchSize) return total;
  }
}

/** The web app's quote names the product the company's quote page quotes when it names none. */
async function withQuotePageProduct(db: Executor, tenant: Tenant, input: QuoteInput): Promise<QuoteInput> {
  if (input.policy.product_reference !== undefined) return input;
  const { quotePageProduct } = await findQuoteSettings(db, tenant.companyId);
  if (quotePageProduct === null) return input;
  return { ...input, policy: { ...input.policy, product_reference: quotePageProduct } };
}

/**
 * 422 unless the company has a product `reference` in sandbox or production: the settings hold for
 * both environments, and one may have the product before the other.
 */
async function requireProductOf(db: Executor, companyId: string, reference: string): Promise<void> {
  const environments: DataEnvironment[] = ['sandbox', 'production'];
  for (const environment of environments)
    if ((await findProducts(db, asTenant(companyId, environment), [reference])).length > 0) return;
  throw new AppError('VALIDATION_FAILED', `The company has no product ${JSON.stringify(reference)}`, {
    errors: [{ path: '/body/quote_page_product', message: 'is not a product of the company' }],
  });
}

/** An adjustment quote's policy: asked for with the client secret, of the tenant, and still live. */
async function ensureAdjustable(
  db: Executor,
  tenant: Tenant,
  policyReference: string,
  caller: QuoteCaller,
): Promise<void> {
  // NOTE: the client id is public; answering whether a policy exists would let anyone list them.
  if (caller.kind === 'public')
    throw invalid('An adjustment is quoted with client credentials', [
      { path: '/body/policy/policy_reference', message: 'needs the client secret (or a staff session)' },
    ]);
  const policy = await findPolicy(db, tenant, policyReference);
  if (policy === undefined) throw notFound('policy');
  // A cancelled or lapsed policy is never adjusted, so its quote could never bind: refused as its
  // adjustment would be, rather than answered as bindable.
  if (!isLive(policy.status))
    throw new AppError('POLICY_NOT_ACTIVE', `The policy is ${policy.status}: it cannot be adjusted`);
}

/** Quotes: rated from the rate book in force, decided by its underwriting rules, bound once (issue 36). */
export function createQuoteService(deps: QuoteServiceDeps) {
  const { db, clock, jobs, throttles } = deps;
  // Quotes arriving while others are being stored go together: one statement and one commit. One
  // statement on its way at a time: a quote takes no row lock that other work holds (its foreign keys'
  // shared ones aside), so nothing but the database itself could stall it, and each statement gathers
  // the most quotes (`npm run bench -- quotes`: 0.79–0.86 of the baseline, median 0.83, against
  // 0.76–0.82 with two).
  const storeQuoteCall = batchedCalls(deps.prepared, {
    fn: 'store_quote',
    arity: STORE_QUOTE_ARITY,
    maxInFlight: 1,
  });
  const batchSize = deps.retentionBatchSize ?? 500;
  jobs.define({
    name: QUOTE_RETENTION_QUEUE,
    options: { retryLimit: 3, retryDelay: 300, expireInSeconds: 3600 },
  });

  const terms = createQuoteTerms(db);

  /** Counts a public (client id alone) quote against its address, as failed logins are counted. */
  async function throttlePublic(tenant: Tenant, caller: QuoteCaller): Promise<void> {
    if (caller.kind !== 'public') return;
    const perAddress = addressThrottleOf(['quote', tenant.companyId], caller.address);
    await throttles.ensureNotThrottled(perAddress);
    await throttles.countAgainst(perAddress);
  }

  /**
   * POST /quotes. A public caller's quote comes back with its purchase secret (`purchaseSecret`), the
   * only time it is told: the quote keeps its hash.
   */
  async function create(
    tenant: Tenant,
    input: QuoteInput,
    caller: QuoteCaller,
  ): Promise<QuoteRecord & { readonly purchaseSecret?: string }> {
    await throttlePublic(tenant, caller);
    const secret = caller.kind === 'public' ? newPurchaseSecret() : undefined;
    const asked = caller.kind === 'public' ? await withQuotePageProduct(db, tenant, input) : input;
    const stored = await rateAndStore(tenant, asked, caller, secret?.hash);
    return secret === undefined ? stored : { ...stored, purchaseSecret: secret.secret };
  }

  async function rateAndStore(
    tenant: Tenant,
    input: QuoteInput,
    caller: QuoteCaller,
    purchaseSecretHash: Buffer | undefined,
  ): Promise<QuoteRecord> {
    const request = quoteRequest(input, clock.now());
    const { policyReference, startAt } = request;
    if (policyReference !== null) await ensureAdjustable(db, tenant, policyReference, caller);
    // NOTE: a quote on remembered terms is stored only if they still hold (one statement in all);
    // when they do not, or the quote cannot be rated on them, the terms are read and it is done again,
    // so every answer is the one the terms in force give.
    const remembered = terms.remembered(tenant, input, startAt);
    if (remembered !== undefined) {
      const quote = quoteOn(remembered, request);
      if (!Array.isArray(quote)) {
        const guard = terms.stillHold(remembered, startAt);
        const stored = await storeQuote(storeQuoteCall, tenant, { ...quote, purchaseSecretHash }, guard);
        if (stored !== undefined) return stored;
      }
    }
    const quote = quoteOn(await terms.read(tenant, input, startAt), request);
    if (Array.isArray(quote)) throw invalid('The quote cannot be rated', quote);
    return insertQuote(db, tenant, { ...quote, purchaseSecretHash });
  }

  async function get(tenant: Tenant, reference: string): Promise<QuoteRecord> {
    const quote = await findQuote(db, tenant, reference);
    if (quote === undefined) throw notFound('quote');
    return quote;
  }

  /**
   * GET /quotes/:quote_reference with the client id alone: the quote only with its purchase secret.
   * A missing or wrong secret answers 404 as a quote that does not exist does, and counts against the
   * address as a failed login does.
   */
  async function getPublic(
    tenant: Tenant,
    reference: string,
    secret: string | undefined,
    address: string,
  ): Promise<QuoteRecord> {
    const perAddress = addressThrottleOf(['quote-read', tenant.companyId], address);
    await throttles.ensureNotThrottled(perAddress);
    const quote = await findQuote(db, tenant, reference);
    if (!secretMatches(quote?.purchaseSecretHash ?? null, secret) || quote === undefined) {
      await throttles.countAgainst(perAddress);
      throw notFound('quote');
    }
    return quote;
  }

  /** The quote as staff read it: with the reference of the policy it is bound to (null while unbound). */
  async function getForStaff(
    tenant: Tenant,
    reference: string,
  ): Promise<{ quote: QuoteRecord; boundPolicyReference: string | null }> {
    const quote = await get(tenant, reference);
    const boundPolicyReference =
      quote.boundPolicyId === null ? undefined : await findPolicyReference(db, quote.boundPolicyId);
    return { quote, boundPolicyReference: boundPolicyReference ?? null };
  }

  return {
    create,
    get,
    getPublic,
    getForStaff,
    bindingHooks,
    decideReferral: (...args: DecideArgs) => decideReferralOf(deps, ...args),
    /** The tenant's referrals waiting for a decision, oldest first (at most `limit`). */
    referrals: (tenant: Tenant, limit: number) => listPendingReferrals(db, tenant, limit),
    settings: (companyId: string): Promise<QuoteSettings> => findQuoteSettings(db, companyId),
    async setSettings(
      companyId: string,
      settings: Parameters<typeof upsertQuoteSettings>[2],
    ): Promise<QuoteSettings> {
      const page = settings.quotePageProduct;
      if (typeof page === 'string') await requireProductOf(db, companyId, page);
      await upsertQuoteSettings(db, companyId, settings, clock.now());
      return findQuoteSettings(db, companyId);
    },
    /** See `pseudonymiseUnbound`: the run the nightly job makes. */
    pseudonymiseUnbound: (now: Date) => pseudonymiseUnbound(db, batchSize, now),

    async registerWorkers(): Promise<void> {
      await jobs.work(QUOTE_RETENTION_QUEUE, async () => {
        await pseudonymiseUnbound(db, batchSize, clock.now());
      });
      await jobs.schedule(QUOTE_RETENTION_QUEUE, '20 3 * * *', {}, 'Europe/London');
    },
  };
}

export type QuoteService = ReturnType<typeof createQuoteService>;
