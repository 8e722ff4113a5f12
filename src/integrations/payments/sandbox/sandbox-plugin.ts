import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import { systemClock, type Clock } from '../../../platform/clock.ts';
import { AppError } from '../../../platform/errors.ts';
import { findFormLimitBreach } from '../../../platform/http/body-limits.ts';
import { createIssuedKeyCheck, registerApiKeyCheck } from './api-keys.ts';
import {
  createEndpoints,
  createRateLimiter,
  formErrorBody,
  send,
  type EndpointFactory,
} from './endpoints.ts';
import { createSandboxEngine, type Emit, type SandboxEngine } from './engine.ts';
import { StripeApiError, type StripeErrorBody } from './errors.ts';
import { FormError, parseForm, type FormBody } from './form.ts';
import { newId, SANDBOX_API_VERSION, type EventObject } from './objects.ts';
import { ownedStore, ownerOf } from './owned-store.ts';
import { createMemorySandboxStore, type SandboxStore } from './store.ts';
import { createWebhookDeliverer, type SandboxWebhookTarget } from './webhooks.ts';

export interface StripeSandboxOptions {
  /** Defaults to a new in-memory store. */
  readonly store?: SandboxStore;
  /** Timestamps of objects and webhook signatures, and key expiry (24 h). Defaults to the system clock. */
  readonly clock?: Clock;
  /**
   * Where its events are posted: `payment_intent.succeeded`, `payment_intent.payment_failed`,
   * `charge.refunded`, and a refund settling later (`charge.refund.updated`, `refund.updated`, `refund.failed`).
   */
  readonly webhook?: SandboxWebhookTarget;
  /** Waits before retrying a failed webhook delivery (default 1 s, 5 s, 25 s; then it is dropped). */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** Used for webhook deliveries; defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Added to every accepted API request, after its idempotency key is taken (load tests, timeouts). */
  readonly latencyMs?: number;
  /** Share (0–1) of accepted requests answered 500 api_error without doing anything. */
  readonly failureRate?: number;
  /** Requests accepted in any sliding second; the rest are answered 429 at once. */
  readonly rateLimitPerSecond?: number;
  /** The random source of `failureRate` (tests pass a deterministic one). */
  readonly random?: () => number;
  /**
   * How often the sandbox settles, by itself, the Bacs payments its clock has passed the settlement
   * time of (customers on no test clock), and refunds to Stripe's refund test cards. Undefined: only
   * when asked (`settle_due_payments`, `settle_due_refunds`).
   */
  readonly settlementSweepMs?: number;
}

/**
 * A Stripe-compatible API for development, tests and load tests, to mount under `/sandbox/stripe`:
 * the subset of Stripe's v1 API that the Stripe adapter uses, with Stripe's object shapes, errors,
 * form encoding, idempotency keys, test cards and signed webhooks. Test mode only.
 */
export function stripeSandboxPlugin(options: StripeSandboxOptions = {}): FastifyPluginAsync {
  return async (app) => {
    const store = options.store ?? createMemorySandboxStore();
    const clock = options.clock ?? systemClock;
    const owners = ownedStore(store);
    const engine = createSandboxEngine({
      store: owners.store,
      clock,
      emit: createEmitter(app, options, owners.store, clock),
    });
    const isIssued = createIssuedKeyCheck(store);
    registerApiKeyCheck(app, isIssued);
    registerFormParser(app);
    registerErrorHandlers(app);
    const endpoint = createEndpoints({
      store,
      owners,
      clock,
      isIssued,
      takeToken:
        options.rateLimitPerSecond === undefined ? () => true : createRateLimiter(options.rateLimitPerSecond),
      latencyMs: options.latencyMs ?? 0,
      failureRate: options.failureRate ?? 0,
      random: options.random ?? Math.random,
    });
    registerCustomerRoutes(app, endpoint, engine);
    registerPaymentMethodRoutes(app, endpoint, engine);
    registerPaymentIntentRoutes(app, endpoint, engine);
    registerRefundRoutes(app, endpoint, engine);
    registerDirectDebitRoutes(app, endpoint, engine);
    if (options.settlementSweepMs !== undefined)
      startSettlementSweep(app, { store, owners, engine, everyMs: options.settlementSweepMs });
  };
}

/**
 * Settles due Bacs payments and refunds of every account on an interval, each in its own account's
 * scope (so what it writes stays that account's). One sweep at a time; a failure is logged and
 * retried next time.
 */
function startSettlementSweep(
  app: FastifyInstance,
  deps: {
    store: SandboxStore;
    owners: ReturnType<typeof ownedStore>;
    engine: SandboxEngine;
    everyMs: number;
  },
): void {
  let running: Promise<void> | undefined;
  const sweep = async (): Promise<void> => {
    const pending = await deps.store.find(
      'sandbox_settlement',
      { status: 'pending', test_clock: null },
      10_000,
    );
    const accounts = new Set(pending.map(ownerOf).filter((a): a is string => a !== undefined));
    for (const account of accounts) await deps.owners.run(account, () => deps.engine.settleDuePayments({}));
    const refunds = await deps.store.find('sandbox_refund_outcome', { status: 'pending' }, 10_000);
    const refundAccounts = new Set(refunds.map(ownerOf).filter((a): a is string => a !== undefined));
    for (const account of refundAccounts)
      await deps.owners.run(account, () => deps.engine.settleDueRefunds({}));
  };
  const timer = setInterval(() => {
    running ??= sweep()
      .catch((error: unknown) => {
        app.log.warn({ err: error }, 'stripe sandbox: settlement sweep failed');
      })
      .finally(() => {
        running = undefined;
      });
  }, deps.everyMs);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}

/**
 * Events are stored (with the account of the request that caused them) and posted to the webhook
 * target; the API's answer never waits for a delivery.
 */
function createEmitter(
  app: FastifyInstance,
  options: StripeSandboxOptions,
  store: SandboxStore,
  clock: Clock,
): Emit {
  const deliverer = createWebhookDeliverer({
    target: options.webhook,
    clock,
    log: app.log,
    ...(options.webhookRetryDelaysMs === undefined ? {} : { retryDelaysMs: options.webhookRetryDelaysMs }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  app.addHook('onClose', async () => {
    await deliverer.close();
  });
  return async (type, object, request) => {
    const event: EventObject = {
      id: newId('evt'),
      object: 'event',
      api_version: SANDBOX_API_VERSION,
      created: Math.floor(clock.now().getTime() / 1000),
      data: { object },
      livemode: false,
      pending_webhooks: options.webhook === undefined ? 0 : 1,
      request: { id: request.id, idempotency_key: request.idempotencyKey },
      type,
    };
    await store.put(event);
    deliverer.enqueue(event);
  };
}

/** Stripe speaks form encoding only; this plugin's scope drops the app's JSON parser. */
function registerFormParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      const raw = typeof body === 'string' ? body : body.toString('utf8');
      // Far more fields, or names nested far deeper, than any request of Stripe's: refused unparsed.
      const breach = findFormLimitBreach(raw, { fields: 1000, brackets: 16 });
      if (breach !== undefined) {
        done(new FormError(`Invalid request: the body ${breach.message}.`), undefined);
        return;
      }
      try {
        done(null, { raw, params: parseForm(raw) } satisfies FormBody);
      } catch (error) {
        done(error as FormError, undefined);
      }
    },
  );
}

/** Every error in Stripe's shape: its own answers, unreadable forms, the app's 4xx, and unknown routes. */
function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | StripeApiError | FormError | AppError, request, reply) => {
    if (error instanceof StripeApiError) return send(reply, error.status, error.body, error.headers);
    if (error instanceof FormError) return send(reply, 400, formErrorBody(error));
    // The service's own input checks (unstorable text, prototype keys) in Stripe's words.
    if (error instanceof AppError)
      return error.status < 500
        ? send(reply, 400, {
            error: { type: 'invalid_request_error', message: error.message },
          } satisfies StripeErrorBody)
        : send(reply, 500, {
            error: { type: 'api_error', message: error.message },
          } satisfies StripeErrorBody);
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      const message =
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'Invalid request: the sandbox, like Stripe, accepts only application/x-www-form-urlencoded bodies.'
          : error.message;
      return send(reply, error.statusCode === 413 ? 413 : 400, {
        error: { type: 'invalid_request_error', message },
      } satisfies StripeErrorBody);
    }
    request.log.error({ err: error }, 'stripe sandbox: unexpected error');
    return send(reply, 500, {
      error: { type: 'api_error', message: 'An unknown error occurred in the Stripe sandbox.' },
    } satisfies StripeErrorBody);
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, {
      error: {
        type: 'invalid_request_error',
        message: `Unrecognized request URL (${request.method}: ${request.url.split('?')[0] ?? ''}). The Stripe sandbox serves only the endpoints the Stripe adapter uses.`,
      },
    } satisfies StripeErrorBody),
  );
}

const hidden = { schema: { hide: true } };

function registerCustomerRoutes(
  app: FastifyInstance,
  endpoint: EndpointFactory,
  engine: SandboxEngine,
): void {
  app.post(
    '/v1/customers',
    hidden,
    endpoint('secret', ({ params }) => engine.createCustomer(params)),
  );
  app.get(
    '/v1/customers/:id',
    hidden,
    endpoint('secret', ({ id }) => engine.retrieveCustomer(id)),
  );
  app.post(
    '/v1/customers/:id',
    hidden,
    endpoint('secret', ({ id, params }) => engine.updateCustomer(id, params)),
  );
}

/** A browser creates cards with a publishable key (as Stripe.js does); the rest needs a secret key. */
function registerPaymentMethodRoutes(
  app: FastifyInstance,
  endpoint: EndpointFactory,
  engine: SandboxEngine,
): void {
  app.post(
    '/v1/payment_methods',
    hidden,
    endpoint('publishable', ({ params }) => engine.createPaymentMethod(params)),
  );
  app.get(
    '/v1/payment_methods/:id',
    hidden,
    endpoint('secret', ({ id }) => engine.retrievePaymentMethod(id)),
  );
  app.post(
    '/v1/payment_methods/:id/attach',
    hidden,
    endpoint('secret', ({ id, params }) => engine.attachPaymentMethod(id, params)),
  );
}

/** A browser holding an intent's client secret may read and confirm that intent. */
function registerPaymentIntentRoutes(
  app: FastifyInstance,
  endpoint: EndpointFactory,
  engine: SandboxEngine,
): void {
  app.post(
    '/v1/payment_intents',
    hidden,
    endpoint('secret', ({ params, request }) => engine.createPaymentIntent(params, request)),
  );
  app.get(
    '/v1/payment_intents/search',
    hidden,
    endpoint('secret', ({ params }) => engine.searchPaymentIntents(params)),
  );
  app.get(
    '/v1/payment_intents/:id',
    hidden,
    endpoint('client_secret', ({ id, params, caller }) => engine.retrievePaymentIntent(id, params, caller)),
  );
  app.post(
    '/v1/payment_intents/:id/confirm',
    hidden,
    endpoint('client_secret', ({ id, params, caller, request }) =>
      engine.confirmPaymentIntent(id, params, caller, request),
    ),
  );
  app.post(
    '/v1/payment_intents/:id/cancel',
    hidden,
    endpoint('secret', ({ id, params, request }) => engine.cancelPaymentIntent(id, params, request)),
  );
}

function registerRefundRoutes(app: FastifyInstance, endpoint: EndpointFactory, engine: SandboxEngine): void {
  app.post(
    '/v1/refunds',
    hidden,
    endpoint('secret', ({ params, request }) => engine.createRefund(params, request)),
  );
}

/**
 * Bacs Direct Debit: SetupIntents (a browser confirms with the client secret, as Stripe.js does),
 * mandates, Stripe's test clocks, and the sandbox's own test helpers (settle payments or refunds now,
 * revoke a mandate).
 */
function registerDirectDebitRoutes(
  app: FastifyInstance,
  endpoint: EndpointFactory,
  engine: SandboxEngine,
): void {
  app.post(
    '/v1/setup_intents',
    hidden,
    endpoint('secret', ({ params }) => engine.createSetupIntent(params)),
  );
  app.get(
    '/v1/setup_intents/:id',
    hidden,
    endpoint('client_secret', ({ id, params, caller }) => engine.retrieveSetupIntent(id, params, caller)),
  );
  app.post(
    '/v1/setup_intents/:id/confirm',
    hidden,
    endpoint('client_secret', ({ id, params, caller, request }) =>
      engine.confirmSetupIntent(id, params, caller, request),
    ),
  );
  app.get(
    '/v1/mandates/:id',
    hidden,
    endpoint('secret', ({ id }) => engine.retrieveMandate(id)),
  );
  app.post(
    '/v1/test_helpers/test_clocks',
    hidden,
    endpoint('secret', ({ params }) => engine.createTestClock(params)),
  );
  app.get(
    '/v1/test_helpers/test_clocks/:id',
    hidden,
    endpoint('secret', ({ id }) => engine.retrieveTestClock(id)),
  );
  app.post(
    '/v1/test_helpers/test_clocks/:id/advance',
    hidden,
    endpoint('secret', ({ id, params, request }) => engine.advanceTestClock(id, params, request)),
  );
  app.post(
    '/v1/test_helpers/sandbox/settle_due_payments',
    hidden,
    endpoint('secret', ({ params }) => engine.settleDuePayments(params)),
  );
  app.post(
    '/v1/test_helpers/sandbox/settle_due_refunds',
    hidden,
    endpoint('secret', ({ params }) => engine.settleDueRefunds(params)),
  );
  app.post(
    '/v1/test_helpers/sandbox/mandates/:id/revoke',
    hidden,
    endpoint('secret', ({ id, params, request }) => engine.revokeMandate(id, params, request)),
  );
}
