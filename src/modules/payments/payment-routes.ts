import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth, type Tenant } from '../companies/index.ts';
import { PaymentRecordSchema } from '../policies/index.ts';
import { PaymentRequestSchema, PaymentResponseSchema } from './payment-schemas.ts';
import type { PaymentService } from './payment-service.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

function need(body: Record<string, unknown>, fields: readonly string[], type: string): void {
  const errors: FieldError[] = fields
    .filter((f) => body[f] === undefined)
    .map((f) => ({ path: `/body/${f}`, message: `is required for ${type}` }));
  if (errors.length > 0)
    throw new AppError('VALIDATION_FAILED', `${type} needs ${fields.join(', ')}`, { errors });
}

const securityEither = [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }];

/** How routes serving clients and policyholders tell them apart and check a policyholder's policies. */
export interface PolicyholderAccess {
  /** Client credentials, or a policyholder's bearer token (see the auth module's `clientOrPolicyholder`). */
  readonly authenticate: onRequestAsyncHookHandler;
  readonly ownsPolicy: (tenant: Tenant, userId: string, policyReference: string) => Promise<boolean>;
}

/** How the payment routes reach the service and tell a policyholder's request from a client's. */
interface PaymentRouteDeps {
  readonly payments: PaymentService;
  readonly clientAuth: ClientAuth;
  /** Client credentials, or a policyholder's bearer token when policyholders may call. */
  readonly authenticate: onRequestAsyncHookHandler;
  /** A policyholder reaches only their own policies; another's is "not found". */
  readonly checkOwner: (request: FastifyRequest, reference: string | undefined) => Promise<void>;
}

/** POST /payments (the four types of the interface) and GET /payments?policy_reference=. */
export function paymentRoutes(deps: {
  payments: PaymentService;
  clientAuth: ClientAuth;
  policyholders?: PolicyholderAccess;
}): FastifyPluginAsyncTypebox {
  const { payments, clientAuth, policyholders } = deps;
  const routes: PaymentRouteDeps = {
    payments,
    clientAuth,
    authenticate: policyholders?.authenticate ?? clientAuth(),
    checkOwner: async (request, reference) => {
      if (request.policyholder === null || reference === undefined || policyholders === undefined) return;
      if (
        !(await policyholders.ownsPolicy(request.policyholder.tenant, request.policyholder.userId, reference))
      ) {
        throw notFound('policy');
      }
    },
  };
  return async (app) => {
    registerPaymentActions(app, routes);
    registerPaymentReads(app, routes);
  };
}

/** POST /payments: CREATE_PAYMENT_INTENT, ADD_NEW_PAYMENT_METHOD, GET_PAYMENT_METHOD, RETRY_PAYMENT. */
function registerPaymentActions(app: App, deps: PaymentRouteDeps): void {
  const { payments, authenticate, checkOwner } = deps;
  app.post(
    '/payments',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'payments.act',
        tags: ['payments'],
        summary: 'Card payments: intents, cards, retries',
        description: [
          '`CREATE_PAYMENT_INTENT` {product_reference, amount (pence)} → a processor customer and an intent (client credentials only: a policyholder’s token is 403); confirm it on the client with `payment_temporary_token` as the client secret (future usage off-session), then send the result in the policy’s `payment` block. In the sandbox environment: `POST /sandbox/stripe/v1/payment_intents/{id}/confirm` with form fields `client_secret` and `payment_method` (e.g. `pm_card_visa`), as Stripe.js does.',
          '`ADD_NEW_PAYMENT_METHOD` {policy_reference, payment_method_id} → 200 `{type, payment_method_id}`; the card becomes the default (for a policy bound without a card payment, the processor’s customer is made first), and payments waiting for a new card are retried.',
          '`GET_PAYMENT_METHOD` {policy_reference, refund?} → the default card, or with `refund: true` the card that paid first.',
          '`RETRY_PAYMENT` {policy_reference, policy_version_reference} → charges that version’s failed payment now: `payment_amount` on success, `payment_amount: null` and `error_message` on failure; 409 when it is already paid.',
        ].join('\n\n'),
        security: securityEither,
        headers: ClientHeadersSchema,
        body: PaymentRequestSchema,
        response: { 200: PaymentResponseSchema, ...problemResponses(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request) => {
      const tenant = tenantOf(request);
      const body = request.body;
      await checkOwner(request, body.policy_reference);
      switch (body.type) {
        case 'CREATE_PAYMENT_INTENT':
          // A new policy's first payment is the integration's step (client credentials): with a
          // policyholder's token it would be an endpoint for trying cards on the insurer's account.
          // A policyholder buys cover through a quote, whose intent is made for its price alone.
          if (request.policyholder !== null)
            throw new AppError(
              'FORBIDDEN',
              'A payment intent for a new policy is made with client credentials, not a policyholder’s token',
            );
          need(body, ['amount'], body.type);
          return payments.createIntent(tenant, {
            amountPence: body.amount ?? 0,
            productReference: body.product_reference,
            email: body.email,
            name: body.name,
          });
        case 'ADD_NEW_PAYMENT_METHOD':
          need(body, ['policy_reference', 'payment_method_id'], body.type);
          return {
            type: body.type,
            ...(await payments.addPaymentMethod(
              tenant,
              body.policy_reference ?? '',
              body.payment_method_id ?? '',
            )),
          };
        case 'GET_PAYMENT_METHOD':
          need(body, ['policy_reference'], body.type);
          return payments.getPaymentMethod(tenant, body.policy_reference ?? '', body.refund ?? false);
        case 'RETRY_PAYMENT': {
          need(body, ['policy_reference', 'policy_version_reference'], body.type);
          const outcome = await payments.retryPayment(
            tenant,
            body.policy_reference ?? '',
            body.policy_version_reference ?? '',
          );
          return { type: body.type, ...outcome };
        }
      }
    },
  );
}

/** GET /payments/failed (the company's dunning queue) and GET /payments (a policy's records). */
function registerPaymentReads(app: App, deps: PaymentRouteDeps): void {
  const { payments, authenticate, checkOwner } = deps;
  app.get(
    '/payments/failed',
    {
      onRequest: deps.clientAuth(),
      schema: {
        operationId: 'payments.failed',
        tags: ['payments'],
        summary: 'Failed charges and refunds, for follow-up',
        description:
          'The company’s charges that failed and are not yet collected (dunning retries them on its schedule, or they wait for a new card), and its refunds that failed (`type: refund`: the card could not take the money back, so the policyholder is owed it still; `decline_code` is the processor’s reason), the most recently failed first.',
        security: [{ clientId: [], clientSecret: [] }],
        headers: ClientHeadersSchema,
        querystring: Type.Object(
          { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            payments: Type.Array(
              Type.Intersect([
                PaymentRecordSchema,
                Type.Object({ policy_reference: Type.String(), awaiting_new_card: Type.Boolean() }),
              ]),
            ),
          }),
          ...problemResponses(401, 403, 422),
        },
      },
    },
    async (request) => ({
      payments: await payments.listFailed(tenantOf(request), request.query.limit ?? 100),
    }),
  );

  app.get(
    '/payments',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'payments.list',
        tags: ['payments'],
        summary: 'Payment records of a policy',
        description:
          'Charges and refunds, oldest first, with status (pending, succeeded, failed, refunded), amount, processor references, decline code and message.',
        security: securityEither,
        headers: ClientHeadersSchema,
        querystring: Type.Object(
          { policy_reference: Type.String({ minLength: 1, maxLength: 100 }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ payments: Type.Array(PaymentRecordSchema) }),
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request) => {
      await checkOwner(request, request.query.policy_reference);
      return {
        payments: await payments.listForPolicyReference(tenantOf(request), request.query.policy_reference),
      };
    },
  );
}

/**
 * POST /webhooks/stripe: the processor's events, verified with the SDK against the exact raw body
 * (its own JSON parser in this scope keeps the bytes), each event id acted on once.
 */
export function stripeWebhookRoutes(deps: { payments: PaymentService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    // This scope replaces the service's JSON parser: the signature covers the exact bytes.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      done(null, body);
    });
    app.post(
      '/webhooks/stripe',
      {
        schema: {
          operationId: 'payments.stripeWebhook',
          tags: ['payments'],
          summary: 'Stripe webhook receiver',
          description:
            'Point Stripe’s webhook endpoint here (signing secret in `STRIPE_WEBHOOK_SECRET`). The built-in sandbox posts its events here too. A bad signature answers 401; an event about a refund made but not yet on record answers 409, so that the processor delivers it again.',
          body: Type.String(),
          response: {
            200: Type.Object({ received: Type.Boolean(), duplicate: Type.Boolean() }),
            ...problemResponses(401, 409, 422),
          },
        },
      },
      async (request) => {
        const signature = request.headers['stripe-signature'];
        const result = await deps.payments.handleWebhook(
          request.body,
          typeof signature === 'string' ? signature : undefined,
        );
        return { received: true, duplicate: result.duplicate };
      },
    );
  };
}
