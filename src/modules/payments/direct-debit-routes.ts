import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError, notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf } from '../companies/index.ts';
import {
  CollectionsCalendarSchema,
  CollectionsQuerySchema,
  CompanyReferenceParamsSchema,
  NoticePeriodBodySchema,
  NoticePeriodSchema,
  PolicyDirectDebitSchema,
  PolicyReferenceParamsSchema,
  SetupIntentSchema,
} from './direct-debit-schemas.ts';
import { MAX_CALENDAR_DAYS } from './direct-debit-service.ts';
import type { PolicyholderAccess } from './payment-routes.ts';
import type { PaymentService } from './payment-service.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const securityEither = [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }];

const dayNumber = (on: string): number => Date.parse(`${on}T00:00:00Z`) / 86_400_000;

/**
 * Bacs Direct Debit: a policy's SetupIntent and its mandates and collections (clients, or the
 * policyholder for their own policies), and for staff the collections calendar and the company's
 * advance notice period.
 */
export function directDebitRoutes(deps: {
  payments: PaymentService;
  policyholders: PolicyholderAccess;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    registerPolicyRoutes(app, deps);
    registerStaffRoutes(app, deps);
  };
}

function registerPolicyRoutes(
  app: App,
  deps: { payments: PaymentService; policyholders: PolicyholderAccess },
): void {
  const { payments, policyholders } = deps;
  const checkOwner = async (request: FastifyRequest, reference: string) => {
    if (request.policyholder === null) return;
    if (
      !(await policyholders.ownsPolicy(request.policyholder.tenant, request.policyholder.userId, reference))
    )
      throw notFound('policy');
  };

  app.post(
    '/policys/:policy_reference/direct-debit/setup-intents',
    {
      onRequest: policyholders.authenticate,
      schema: {
        operationId: 'payments.createDirectDebitSetup',
        tags: ['payments'],
        summary: 'Start a Direct Debit: a SetupIntent for a Bacs mandate',
        description: [
          'A SetupIntent (`payment_method_types: ["bacs_debit"]`) on the policy’s processor customer. The browser confirms it with `client_secret` and the payer’s sort code, account number, name, email and address, after showing the Direct Debit Guarantee and having the payer confirm they are the account holder and the only person needed to authorise debits (Stripe.js `confirmBacsDebitSetup`; in the sandbox `POST /sandbox/stripe/v1/setup_intents/{id}/confirm`).',
          'Then send the SetupIntent’s payment method in `ADD_NEW_PAYMENT_METHOD`: the mandate is recorded and becomes the policy’s default method.',
        ].join('\n\n'),
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyReferenceParamsSchema,
        response: { 201: SetupIntentSchema, ...problemResponses(401, 404, 422, 503) },
      },
    },
    async (request, reply) => {
      await checkOwner(request, request.params.policy_reference);
      const created = await payments.directDebit.createSetupIntent(
        tenantOf(request),
        request.params.policy_reference,
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/policys/:policy_reference/direct-debit',
    {
      onRequest: policyholders.authenticate,
      schema: {
        operationId: 'payments.directDebit',
        tags: ['payments'],
        summary: 'A policy’s Direct Debit mandates and collections',
        description:
          'Mandates (reference, status, account holder, sort code and the account number’s last 4 digits) and every Direct Debit collection: scheduled (with its day and when its advance notice was sent), processing, paid (with when it settled) or failed (with the bank’s reason).',
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyReferenceParamsSchema,
        response: { 200: PolicyDirectDebitSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      await checkOwner(request, request.params.policy_reference);
      return payments.directDebit.forPolicy(tenantOf(request), request.params.policy_reference);
    },
  );
}

function registerStaffRoutes(
  app: App,
  deps: { payments: PaymentService; adminAuth: onRequestAsyncHookHandler },
): void {
  const { payments, adminAuth } = deps;
  const security = [{ adminKey: [] }];

  app.get(
    '/admin/collections',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'payments.collections',
        tags: ['admin'],
        summary: 'Direct Debit collections calendar',
        description: `Per London day from \`from\` to \`to\` (both included, at most ${String(MAX_CALENDAR_DAYS)} days): what will be collected (\`scheduled\`), what is with Bacs (\`processing\`), what was paid and what failed, with each collection.`,
        security,
        querystring: CollectionsQuerySchema,
        response: { 200: CollectionsCalendarSchema, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) => {
      const { company_reference, environment, from, to } = request.query;
      const span = dayNumber(to) - dayNumber(from) + 1;
      if (!(span >= 1 && span <= MAX_CALENDAR_DAYS))
        throw new AppError('VALIDATION_FAILED', `to must be from to ${String(MAX_CALENDAR_DAYS)} days on`, {
          errors: [
            {
              path: '/querystring/to',
              message: span < 1 ? 'is before from' : `is more than ${String(MAX_CALENDAR_DAYS)} days on`,
            },
          ],
        });
      return payments.directDebit.calendar(company_reference, environment, from, to);
    },
  );

  app.get(
    '/admin/companies/:company_reference/direct-debit',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'payments.directDebitSettings',
        tags: ['admin'],
        summary: 'The company’s Direct Debit advance notice period',
        security,
        params: CompanyReferenceParamsSchema,
        response: { 200: NoticePeriodSchema, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => payments.directDebit.noticePeriod(request.params.company_reference),
  );

  app.put(
    '/admin/companies/:company_reference/direct-debit',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'payments.setDirectDebitSettings',
        tags: ['admin'],
        summary: 'Set the company’s Direct Debit advance notice period',
        description:
          'Working days (England and Wales) between a collection’s advance notice and the collection: the Bacs scheme’s default is 10, and a period agreed with payers may be no shorter than 3. Applies to collections announced from now on.',
        security,
        params: CompanyReferenceParamsSchema,
        body: NoticePeriodBodySchema,
        response: { 200: NoticePeriodSchema, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) =>
      payments.directDebit.setNoticePeriod(
        request.params.company_reference,
        request.body.notice_working_days,
      ),
  );
}
