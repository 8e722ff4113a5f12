import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import '../../platform/http/actor.ts';
import {
  ClientHeadersSchema,
  sendsClientSecret,
  tenantOf,
  type ClientAuth,
  type CompanyService,
} from '../companies/index.ts';
import {
  BreakdownSchema,
  CompanyParamsSchema,
  PurchaseActionSchema,
  PurchaseBodySchema,
  PurchaseBoundSchema,
  QuoteInputSchema,
  QuoteParamsSchema,
  QuoteSchema,
  QuoteSecretHeadersSchema,
  QuoteSettingsSchema,
  ReferralDecisionSchema,
  ReferralQuerySchema,
  StaffQuoteQuerySchema,
  StaffQuoteSchema,
} from './quote-schemas.ts';
import { fromPence } from '../../platform/money.ts';
import type { PurchaseService } from './quote-purchase-service.ts';
import type { QuoteSettings } from './quote-repository.ts';
import type { QuoteCaller, QuoteService } from './quote-service.ts';
import { quoteJson, quoteView, type QuoteAudience } from './quote-views.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

export interface QuoteRouteDeps {
  readonly quotes: QuoteService;
  readonly purchases: PurchaseService;
  readonly companies: CompanyService;
  readonly clientAuth: ClientAuth;
  readonly adminAuth: onRequestAsyncHookHandler;
  readonly clock: Clock;
  /** DEFAULT_CLIENT_ID: the company of a public quote that names none (a single-insurer deployment). */
  readonly defaultClientId?: string | undefined;
}

const quoteRef = Type.Ref('Quote');
const adminSecurity = [{ adminKey: [] }];

/**
 * The company's integration (client secret) or a staff session sees a quote whole; a request with the
 * client id alone is the web app asking for its visitor, who sees what the insurer chose to show.
 */
function callerOf(request: FastifyRequest): { caller: QuoteCaller; audience: QuoteAudience } {
  // NOTE: by client authentication's own rule: a blank client_secret (`' '`) is none, and a request
  // with one was the client id's alone, not a client's that may read any quote whole without its secret.
  if (request.actor?.kind === 'staff' || sendsClientSecret(request))
    return { caller: { kind: 'client' }, audience: 'full' };
  return { caller: { kind: 'public', address: request.ip }, audience: 'customer' };
}

/** POST /quotes, GET /quotes/:quote_reference; the referral queue and the company's quote settings. */
export function quoteRoutes(deps: QuoteRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(BreakdownSchema);
    app.addSchema(QuoteSchema);
    app.addSchema(StaffQuoteSchema);
    registerQuotes(app, deps);
    registerStaffRead(app, deps);
    registerPurchase(app, deps);
    registerReferrals(app, deps);
    registerSettings(app, deps);
  };
}

function registerQuotes(app: App, deps: QuoteRouteDeps): void {
  const { quotes, clock } = deps;
  app.post(
    '/quotes',
    {
      onRequest: deps.clientAuth({ secretRequired: false, defaultClientId: deps.defaultClientId }),
      schema: {
        operationId: 'quotes.create',
        tags: ['quotes'],
        summary: 'Rate a quote',
        description: [
          'Rates the policy object (without `pricing`) on the approved rate book version in force on `policy.start_date` for `policy.product_reference`, applies its underwriting rules, and stores the quote with its breakdown. Each request is a new quote.',
          'With client credentials the answer shows every factor and the quote as asked; with the client id alone (the web app) it shows the factors the rate book marks `customer_visible`, and each such request counts against the caller’s address as failed logins do (429 with Retry-After past 20 an hour).',
          'New cover is never backdated: a new-business `policy.start_date` on a day (London) that has passed answers 422 naming it, and a quote for today sells cover from when it is bought.',
          '422 names every invalid or missing field (including values a factor needs); 422 `UNKNOWN_PRODUCT` for a product the company does not have; 422 `NO_RATE_BOOK` when the product has no approved version in force at the start; 404 when `policy.policy_reference` names no policy of the company, 409 `POLICY_NOT_ACTIVE` when it names a cancelled or lapsed one.',
        ].join(' '),
        security: [{ clientId: [], clientSecret: [] }, { clientId: [] }],
        headers: ClientHeadersSchema,
        body: QuoteInputSchema,
        response: { 201: quoteRef, ...problemResponses(401, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const { caller, audience } = callerOf(request);
      const quote = await quotes.create(tenantOf(request), request.body, caller);
      const view = quoteView(quote, clock.now(), audience);
      // NOTE: sent as JSON text, which Fastify does not serialise again: the quote's input and breakdown
      // are already JSON from storing it (quoteJson writes what the 201 schema's serializer would).
      return reply
        .code(201)
        .header('location', `/quotes/${quote.reference}`)
        .type('application/json; charset=utf-8')
        .send(quoteJson(view, quote, quote.purchaseSecret));
    },
  );

  app.get(
    '/quotes/:quote_reference',
    {
      onRequest: deps.clientAuth({ secretRequired: false, defaultClientId: deps.defaultClientId }),
      schema: {
        operationId: 'quotes.get',
        tags: ['quotes'],
        summary: 'Read a quote',
        description: [
          'The quote with its pricing, breakdown, decision, referral and status. Another company’s quote answers 404.',
          'With the client id alone (the web app) only with the `purchase_secret` header `POST /quotes` answered with, shown as that answer was (the factors the rate book marks `customer_visible`); a missing or wrong secret answers 404, and counts against the caller’s address as a failed login does (429 with Retry-After past 20 an hour).',
        ].join(' '),
        security: [{ clientId: [], clientSecret: [] }, { clientId: [] }],
        headers: QuoteSecretHeadersSchema,
        params: QuoteParamsSchema,
        response: { 200: quoteRef, ...problemResponses(401, 404, 422, 429) },
      },
    },
    async (request) => {
      const tenant = tenantOf(request);
      const reference = request.params.quote_reference;
      const { caller, audience } = callerOf(request);
      const quote =
        caller.kind === 'public'
          ? await quotes.getPublic(tenant, reference, request.headers.purchase_secret, caller.address)
          : await quotes.get(tenant, reference);
      return quoteView(quote, clock.now(), audience);
    },
  );
}

function registerPurchase(app: App, deps: QuoteRouteDeps): void {
  app.post(
    '/quotes/:quote_reference/purchase',
    {
      onRequest: deps.clientAuth({ secretRequired: false, defaultClientId: deps.defaultClientId }),
      schema: {
        operationId: 'quotes.purchase',
        tags: ['quotes'],
        summary: 'Buy a quote: the first payment, then the policy',
        description: [
          'The web app’s quote and buy, with the client id alone (throttled per address as `POST /quotes` is). Confirms the quote’s payment intent (one per quote) with the card, for the first payment its plan owes (the `upfront_premium`; on the monthly plan, with the `deposit_fee` and the first installment, which statements then do not bill); only once the payment has succeeded is the policy created, binding the quote exactly as `POST /policys` does, with the welcome email.',
          '201 `bound` with the policy and how to sign in; 202 `requires_action` when the card needs 3-D Secure (complete it with `client_secret`, then send the same request again); 402 `PAYMENT_DECLINED` (no policy; another card may be sent); 409 `QUOTE_NOT_BINDABLE` (declined, referred and not approved, expired, its start day passed, bound already; nothing charged); cover bought for today starts when it is bought; 422 for a plan other than the quote’s; 404 for another company’s quote.',
        ].join(' '),
        security: [{ clientId: [] }, { clientId: [], clientSecret: [] }],
        headers: QuoteSecretHeadersSchema,
        params: QuoteParamsSchema,
        body: PurchaseBodySchema,
        response: {
          201: PurchaseBoundSchema,
          202: PurchaseActionSchema,
          ...problemResponses(401, 402, 404, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const reference = request.params.quote_reference;
      const outcome = await deps.purchases.purchase(
        tenantOf(request),
        reference,
        {
          paymentMethodId: request.body.payment_method_id,
          installmentPlan: request.body.installment_plan,
          caller:
            callerOf(request).caller.kind === 'public'
              ? { kind: 'public', secret: request.headers.purchase_secret }
              : { kind: 'client' },
        },
        request.ip,
      );
      if (outcome.status === 'requires_action')
        return reply.code(202).send({
          status: outcome.status,
          quote_reference: reference,
          payment_intent: outcome.paymentIntentId,
          client_secret: outcome.clientSecret,
          payment_method: outcome.paymentMethodId,
          amount: fromPence(outcome.amountPence),
        });
      return reply.code(201).send({
        status: outcome.status,
        quote_reference: reference,
        policy_reference: outcome.policyReference,
        user_reference: outcome.userReference,
        amount_paid: fromPence(outcome.amountPence),
        sign_in: outcome.signIn,
      });
    },
  );
}

function registerStaffRead(app: App, deps: QuoteRouteDeps): void {
  const { quotes, companies, clock, adminAuth } = deps;
  app.get(
    '/admin/quotes/:quote_reference',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'quotes.staffGet',
        tags: ['admin'],
        summary: 'Read a quote as staff',
        description:
          'The company’s quote whole, as the staff console shows it: the quote as asked, its decision and reasons, pricing, every factor of the breakdown, referral, status, and the policy it is bound to. Any staff role reads it, as the referral queue. Another company’s or environment’s quote answers 404.',
        security: adminSecurity,
        params: QuoteParamsSchema,
        querystring: StaffQuoteQuerySchema,
        response: { 200: Type.Ref('StaffQuote'), ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) => {
      const { company_reference, environment } = request.query;
      const tenant = await companies.tenantOf(company_reference, environment);
      const { quote, boundPolicyReference } = await quotes.getForStaff(
        tenant,
        request.params.quote_reference,
      );
      return { ...quoteView(quote, clock.now(), 'full'), bound_policy_reference: boundPolicyReference };
    },
  );
}

function registerReferrals(app: App, deps: QuoteRouteDeps): void {
  const { quotes, companies, clock, adminAuth } = deps;
  app.get(
    '/admin/referrals',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'quotes.referrals',
        tags: ['admin'],
        summary: 'The referral queue',
        description:
          'The company’s referred quotes waiting for an underwriter, oldest first, each with its reasons and breakdown.',
        security: adminSecurity,
        querystring: ReferralQuerySchema,
        response: {
          200: Type.Object({ referrals: Type.Array(quoteRef) }),
          ...problemResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { company_reference, environment, limit } = request.query;
      const tenant = await companies.tenantOf(company_reference, environment);
      const now = clock.now();
      const pending = await quotes.referrals(tenant, limit ?? 50);
      return { referrals: pending.map((quote) => quoteView(quote, now, 'full')) };
    },
  );

  app.post(
    '/admin/referrals/:quote_reference/decision',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'quotes.decideReferral',
        tags: ['admin'],
        summary: 'Approve or decline a referred quote',
        description:
          'An operations or admin staff member approves (the quote becomes bindable until it expires) or declines a pending referral, with a reason. The decision is in the staff audit trail and is emailed to the applicant. 409 when the quote is not a pending referral; 403 for the admin API key, which is no staff member.',
        security: adminSecurity,
        params: QuoteParamsSchema,
        body: ReferralDecisionSchema,
        response: { 200: quoteRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) => {
      const actor = request.actor;
      if (actor?.kind !== 'staff')
        throw new AppError('FORBIDDEN', 'A referral is decided by a staff member (operations or admin)');
      const { company_reference, environment, decision, reason } = request.body;
      const tenant = await companies.tenantOf(company_reference, environment);
      const quote = await quotes.decideReferral(
        tenant,
        request.params.quote_reference,
        { staffId: actor.staffId, email: actor.email },
        { outcome: decision, reason: reason.trim() },
      );
      return quoteView(quote, clock.now(), 'full');
    },
  );
}

function registerSettings(app: App, deps: QuoteRouteDeps): void {
  const { quotes, companies, adminAuth } = deps;
  // The settings are the company's, in both environments: either tenant names the company.
  const companyId = async (reference: string): Promise<string> =>
    (await companies.tenantOf(reference, 'production')).companyId;
  const view = (s: QuoteSettings) => ({
    validity_days: s.validityDays,
    retention_days: s.retentionDays,
    quote_page_product: s.quotePageProduct,
  });
  app.get(
    '/admin/companies/:company_reference/quotes',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'quotes.settings',
        tags: ['admin'],
        summary: 'The company’s quote validity and retention',
        security: adminSecurity,
        params: CompanyParamsSchema,
        response: { 200: QuoteSettingsSchema, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => view(await quotes.settings(await companyId(request.params.company_reference))),
  );
  app.put(
    '/admin/companies/:company_reference/quotes',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'quotes.setSettings',
        tags: ['admin'],
        summary: 'Set the company’s quote validity, retention and quote page product',
        description:
          'How many days a quote may be bound (applies to quotes made from now on), after how many days a quote never bound is pseudonymised (applies at the next nightly run), and the product the public quote page quotes (`quote_page_product`; left out, it stays as it is).',
        security: adminSecurity,
        params: CompanyParamsSchema,
        body: QuoteSettingsSchema,
        response: { 200: QuoteSettingsSchema, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) =>
      view(
        await quotes.setSettings(await companyId(request.params.company_reference), {
          validityDays: request.body.validity_days,
          retentionDays: request.body.retention_days,
          quotePageProduct: request.body.quote_page_product,
        }),
      ),
  );
}
