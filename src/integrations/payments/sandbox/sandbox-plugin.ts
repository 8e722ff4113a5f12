import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../../../platform/clock.ts';
import { createSandboxEngine, type Caller, type Emit, type RequestInfo } from './engine.ts';
import { StripeApiError, type StripeErrorBody } from './errors.ts';
import { AppError } from '../../../platform/errors.ts';
import { findFormLimitBreach } from '../../../platform/http/body-limits.ts';
import { FormError, parseForm, type FormObject } from './form.ts';
import { newId, randomId, type EventObject } from './objects.ts';
import { ownedStore } from './owned-store.ts';
import { createMemorySandboxStore, type SandboxStore, type StoredResponse } from './store.ts';
import { createWebhookDeliverer, type SandboxWebhookTarget } from './webhooks.ts';

/** The API version the sandbox speaks: the one `stripe` 23.1.0 pins. */
export const SANDBOX_API_VERSION = '2026-10-28.endive';
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a key found issued is accepted before the store is asked again. */
const ISSUED_KEY_TRUST_MS = 60_000;
const MAX_KEY_LENGTH = 255;

export interface StripeSandboxOptions {
  /** Defaults to a new in-memory store. */
  readonly store?: SandboxStore;
  /** Timestamps of objects and webhook signatures, and key expiry (24 h). Defaults to the system clock. */
  readonly clock?: Clock;
  /** Where `payment_intent.succeeded`, `payment_intent.payment_failed` and `charge.refunded` are posted. */
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
}

interface FormBody {
  readonly raw: string;
  readonly params: FormObject;
}

interface Context {
  readonly id: string;
  readonly params: FormObject;
  readonly caller: Caller;
  readonly request: RequestInfo;
}

/** `publishable`: a browser with a publishable key may create cards (as Stripe.js does), nothing else. */
type Access = 'secret' | 'client_secret' | 'publishable';

/** Requests accepted within any sliding second, at most `perSecond`. */
function createRateLimiter(perSecond: number): () => boolean {
  const accepted: number[] = [];
  let head = 0;
  return () => {
    const now = performance.now();
    while (head < accepted.length && (accepted[head] ?? 0) <= now - 1000) head += 1;
    if (head > 4096) {
      accepted.splice(0, head);
      head = 0;
    }
    if (accepted.length - head >= perSecond) return false;
    accepted.push(now);
    return true;
  };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Stripe's masking of a key in its errors: the prefix (`sk_test_`), the rest as stars but its last four. */
function redactKey(key: string): string {
  const prefix = /^[a-z]{2}_(?:test|live)_/.exec(key)?.[0] ?? '';
  const rest = key.slice(prefix.length);
  return rest.length <= 4 ? `${prefix}****` : `${prefix}${'*'.repeat(rest.length - 4)}${rest.slice(-4)}`;
}

/** Stripe's answer to a key that names no account: 401, whatever the route. */
const invalidApiKey = (key: string): StripeApiError =>
  new StripeApiError(401, {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: `Invalid API Key provided: ${redactKey(key)}`,
  });

/** The key in the Authorization header: Bearer, or Basic with the key as the user name (as Stripe reads it). */
function headerKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ') === true) return header.slice(7).trim();
  if (header?.startsWith('Basic ') === true)
    return Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0];
  return undefined;
}

/** The `key` a browser sends in the form or the query, as Stripe.js sends its publishable key. */
function keyParameter(request: FastifyRequest): string | undefined {
  const body = request.body as FormBody | undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const key = body?.params['key'] ?? query?.['key'];
  return typeof key === 'string' ? key : undefined;
}

const isTestSecretKey = (key: string): boolean =>
  key.startsWith('sk_test_') && key.length > 'sk_test_'.length;

/**
 * Secret keys the sandbox issued (`sk_test_…`, one account each) may do anything; a browser (no key, or
 * `pk_test_…`, in the Authorization header or as Stripe.js sends it, a `key` parameter) only what its
 * client secret allows, and create cards. Any other key, a made-up `sk_test_…` among them, is refused.
 */
async function authenticate(
  request: FastifyRequest,
  access: Access,
  isIssued: (secretKey: string) => Promise<boolean>,
): Promise<{ caller: Caller; account: string }> {
  let key = headerKey(request);
  if (key === undefined && access !== 'secret') key = keyParameter(request);
  if (key !== undefined && isTestSecretKey(key) && (await isIssued(key))) {
    return { caller: { kind: 'secret' }, account: `acct_${sha256(key).slice(0, 16)}` };
  }
  if (access !== 'secret' && (key === undefined || key === '' || key.startsWith('pk_test_'))) {
    return { caller: { kind: 'publishable' }, account: 'publishable' };
  }
  if (key === undefined || key === '') {
    throw new StripeApiError(401, {
      type: 'invalid_request_error',
      message:
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    });
  }
  throw invalidApiKey(key);
}

/** Card details are never kept, not even hashed (a card number's hash can be reversed by trying them all). */
const UNHASHED = new Set(['card[number]', 'card[cvc]']);

/** Parameters in a canonical order, so the same request hashes the same whatever the encoder's order. */
function requestHash(method: string, path: string, raw: string): string {
  const pairs = [...new URLSearchParams(raw)]
    .filter(([k]) => !UNHASHED.has(k))
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  return sha256(`${method} ${path}\n${pairs.join('&')}`);
}

function formErrorBody(error: FormError): StripeErrorBody {
  const { message, code, param } = error;
  return {
    error: { type: 'invalid_request_error', message, code, ...(param === undefined ? {} : { param }) },
  };
}

function send(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(body);
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
    const random = options.random ?? Math.random;
    const latencyMs = options.latencyMs ?? 0;
    const failureRate = options.failureRate ?? 0;
    const takeToken =
      options.rateLimitPerSecond === undefined ? () => true : createRateLimiter(options.rateLimitPerSecond);
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

    const emit: Emit = async (type, object, request) => {
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
      await owners.store.put(event);
      deliverer.enqueue(event);
    };
    const owners = ownedStore(store);
    const engine = createSandboxEngine({ store: owners.store, clock, emit });

    // NOTE: keys are never withdrawn, so a key found issued is trusted for a while without asking the
    // store again (each API call would otherwise cost a lookup); one not found is looked up every time,
    // since it may have been issued since (a company created in another process).
    const issuedUntilMs = new Map<string, number>();
    const isIssued = async (secretKey: string): Promise<boolean> => {
      const nowMs = performance.now();
      if ((issuedUntilMs.get(secretKey) ?? 0) > nowMs) return true;
      const issued = await store.isIssuedKey(secretKey);
      if (issued) issuedUntilMs.set(secretKey, nowMs + ISSUED_KEY_TRUST_MS);
      return issued;
    };

    // Before the body is parsed and before routing, as on Stripe: a key in the Authorization header
    // that names no account is 401 on every route, known or not, whatever the body.
    app.addHook('onRequest', async (request) => {
      const key = headerKey(request);
      if (key === undefined || key === '' || key.startsWith('pk_test_')) return;
      if (!isTestSecretKey(key) || !(await isIssued(key))) throw invalidApiKey(key);
    });

    // Stripe speaks form encoding only; this plugin's scope drops the app's JSON parser.
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

    /** Runs the endpoint; card errors and validation errors become stored-able answers. */
    async function run(handler: (ctx: Context) => Promise<unknown>, ctx: Context): Promise<StoredResponse> {
      try {
        return { status: 200, body: await handler(ctx) };
      } catch (error) {
        if (error instanceof StripeApiError) return { status: error.status, body: error.body };
        if (error instanceof FormError) return { status: 400, body: formErrorBody(error) };
        throw error;
      }
    }

    /** An endpoint whose objects are those of the caller's account (a secret key's); see ownedStore. */
    function endpoint(access: Access, handler: (ctx: Context) => Promise<unknown>) {
      const serve = answer(handler);
      return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        const requestId = `req_${randomId(14)}`;
        const version = request.headers['stripe-version'];
        void reply.headers({
          'request-id': requestId,
          'stripe-version': typeof version === 'string' ? version : SANDBOX_API_VERSION,
        });
        const authenticated = await authenticate(request, access, isIssued);
        const run = () => serve(request, reply, requestId, authenticated);
        if (access === 'publishable' && authenticated.caller.kind === 'publishable')
          return owners.runUnclaimed(run);
        return owners.run(authenticated.caller.kind === 'secret' ? authenticated.account : undefined, run);
      };
    }

    function answer(handler: (ctx: Context) => Promise<unknown>) {
      return async (
        request: FastifyRequest,
        reply: FastifyReply,
        requestId: string,
        { caller, account }: { caller: Caller; account: string },
      ): Promise<FastifyReply> => {
        if (!takeToken()) {
          throw new StripeApiError(
            429,
            {
              type: 'invalid_request_error',
              code: 'rate_limit',
              message: 'Request rate limit exceeded. Try again later, with backoff.',
            },
            { 'retry-after': '1' },
          );
        }
        const [path = '', query = ''] = request.url.split('?', 2);
        const body = request.body as FormBody | undefined;
        const raw = request.method === 'GET' ? query : (body?.raw ?? '');
        const params = request.method === 'GET' ? parseForm(query) : (body?.params ?? {});
        const keyHeader = request.headers['idempotency-key'];
        const idempotencyKey =
          request.method === 'POST' && typeof keyHeader === 'string' && keyHeader !== ''
            ? keyHeader
            : undefined;
        const ctx: Context = {
          id: (request.params as { id?: string }).id ?? '',
          params,
          caller,
          request: { id: requestId, idempotencyKey: idempotencyKey ?? null },
        };

        if (idempotencyKey === undefined) {
          if (latencyMs > 0) await sleep(latencyMs);
          if (failureRate > 0 && random() < failureRate) throw injectedFailure();
          const result = await run(handler, ctx);
          return send(reply, result.status, result.body);
        }

        if (idempotencyKey.length > MAX_KEY_LENGTH) {
          throw new StripeApiError(400, {
            type: 'invalid_request_error',
            message: `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters.`,
          });
        }
        void reply.header('idempotency-key', idempotencyKey);
        const hash = requestHash(request.method, path, raw);
        const existing = await reserve(account, idempotencyKey, hash);
        if (existing !== undefined) {
          if (existing.requestHash !== hash) {
            throw new StripeApiError(400, {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            });
          }
          if (existing.response === undefined) {
            throw new StripeApiError(409, {
              type: 'idempotency_error',
              code: 'idempotency_key_in_use',
              message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${idempotencyKey}. Please try again later.`,
            });
          }
          return send(reply, existing.response.status, existing.response.body, {
            'idempotent-replayed': 'true',
          });
        }

        let result: StoredResponse;
        try {
          if (latencyMs > 0) await sleep(latencyMs);
          if (failureRate > 0 && random() < failureRate) throw injectedFailure();
          result = await run(handler, ctx);
        } catch (error) {
          await store.releaseIdempotencyKey(account, idempotencyKey);
          throw error;
        }
        // NOTE: as on Stripe, only requests that ran are remembered (successes and card errors);
        // a request refused for its parameters may be retried with the same key once corrected.
        if (result.status === 200 || result.status === 402)
          await store.completeIdempotencyKey(account, idempotencyKey, result);
        else await store.releaseIdempotencyKey(account, idempotencyKey);
        return send(reply, result.status, result.body);
      };
    }

    async function reserve(account: string, key: string, hash: string) {
      const createdAt = clock.now();
      const existing = await store.reserveIdempotencyKey({ account, key, requestHash: hash, createdAt });
      if (existing === undefined || createdAt.getTime() - existing.createdAt.getTime() < IDEMPOTENCY_TTL_MS)
        return existing;
      // Stripe forgets keys after 24 hours: the key is new again.
      await store.releaseIdempotencyKey(account, key);
      return store.reserveIdempotencyKey({ account, key, requestHash: hash, createdAt });
    }

    function injectedFailure(): StripeApiError {
      return new StripeApiError(500, {
        type: 'api_error',
        message: 'An unknown error occurred (injected by the Stripe sandbox).',
      });
    }

    const hidden = { schema: { hide: true } };
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
      '/v1/refunds',
      hidden,
      endpoint('secret', ({ params, request }) => engine.createRefund(params, request)),
    );
  };
}
