import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import { authenticate, type Access } from './api-keys.ts';
import type { Caller, RequestInfo } from './engine.ts';
import { StripeApiError, type StripeErrorBody } from './errors.ts';
import { FormError, parseForm, type FormBody, type FormObject } from './form.ts';
import { randomId, SANDBOX_API_VERSION } from './objects.ts';
import type { ownedStore } from './owned-store.ts';
import type { SandboxStore, StoredResponse } from './store.ts';

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

/** What an endpoint's handler gets: the path's id, the parameters, who calls, and the request's ids. */
export interface EndpointContext {
  readonly id: string;
  readonly params: FormObject;
  readonly caller: Caller;
  readonly request: RequestInfo;
}

type Handler = (ctx: EndpointContext) => Promise<unknown>;

export interface EndpointDeps {
  /** The store as it is, for idempotency keys (which are kept per account already). */
  readonly store: SandboxStore;
  /** The store by account, in which handlers run (see ownedStore). */
  readonly owners: ReturnType<typeof ownedStore>;
  readonly clock: Clock;
  readonly isIssued: (secretKey: string) => Promise<boolean>;
  /** False when the request is over the rate limit. */
  readonly takeToken: () => boolean;
  readonly latencyMs: number;
  readonly failureRate: number;
  readonly random: () => number;
}

/** Requests accepted within any sliding second, at most `perSecond`. */
export function createRateLimiter(perSecond: number): () => boolean {
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

export function formErrorBody(error: FormError): StripeErrorBody {
  const { message, code, param } = error;
  return {
    error: { type: 'invalid_request_error', message, code, ...(param === undefined ? {} : { param }) },
  };
}

export function send(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(body);
}

/**
 * The route handlers of the sandbox's endpoints: authenticated, rate limited, slowed or failed as the
 * options ask, idempotent under an `Idempotency-Key`, and run with the objects of the caller's account
 * (a secret key's; see ownedStore).
 */
export function createEndpoints(deps: EndpointDeps) {
  return (access: Access, handler: Handler) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const requestId = `req_${randomId(14)}`;
      const version = request.headers['stripe-version'];
      void reply.headers({
        'request-id': requestId,
        'stripe-version': typeof version === 'string' ? version : SANDBOX_API_VERSION,
      });
      const authenticated = await authenticate(request, access, deps.isIssued);
      const run = () => answer(deps, handler, { request, reply, requestId, ...authenticated });
      if (access === 'publishable' && authenticated.caller.kind === 'publishable')
        return deps.owners.runUnclaimed(run);
      return deps.owners.run(authenticated.caller.kind === 'secret' ? authenticated.account : undefined, run);
    };
}

export type EndpointFactory = ReturnType<typeof createEndpoints>;

interface Exchange {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly requestId: string;
  readonly caller: Caller;
  readonly account: string;
}

async function answer(deps: EndpointDeps, handler: Handler, exchange: Exchange): Promise<FastifyReply> {
  const { request, reply, requestId, caller } = exchange;
  if (!deps.takeToken()) {
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
    request.method === 'POST' && typeof keyHeader === 'string' && keyHeader !== '' ? keyHeader : undefined;
  const ctx: EndpointContext = {
    id: (request.params as { id?: string }).id ?? '',
    params,
    caller,
    request: { id: requestId, idempotencyKey: idempotencyKey ?? null },
  };

  if (idempotencyKey === undefined) {
    const result = await simulateAndRun(deps, handler, ctx);
    return send(reply, result.status, result.body);
  }
  return answerOnce(deps, handler, ctx, {
    ...exchange,
    key: idempotencyKey,
    hash: requestHash(request.method, path, raw),
  });
}

/** The first request with a key runs; a retry with it gets the first answer (or 409 while it runs). */
async function answerOnce(
  deps: EndpointDeps,
  handler: Handler,
  ctx: EndpointContext,
  { reply, account, key, hash }: Exchange & { readonly key: string; readonly hash: string },
): Promise<FastifyReply> {
  if (key.length > MAX_KEY_LENGTH) {
    throw new StripeApiError(400, {
      type: 'invalid_request_error',
      message: `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters.`,
    });
  }
  void reply.header('idempotency-key', key);
  const existing = await reserve(deps, account, key, hash);
  if (existing !== undefined) {
    if (existing.requestHash !== hash) {
      throw new StripeApiError(400, {
        type: 'idempotency_error',
        message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      });
    }
    if (existing.response === undefined) {
      throw new StripeApiError(409, {
        type: 'idempotency_error',
        code: 'idempotency_key_in_use',
        message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
      });
    }
    return send(reply, existing.response.status, existing.response.body, { 'idempotent-replayed': 'true' });
  }

  let result: StoredResponse;
  try {
    result = await simulateAndRun(deps, handler, ctx);
  } catch (error) {
    await deps.store.releaseIdempotencyKey(account, key);
    throw error;
  }
  // NOTE: as on Stripe, only requests that ran are remembered (successes and card errors);
  // a request refused for its parameters may be retried with the same key once corrected.
  if (result.status === 200 || result.status === 402)
    await deps.store.completeIdempotencyKey(account, key, result);
  else await deps.store.releaseIdempotencyKey(account, key);
  return send(reply, result.status, result.body);
}

async function reserve(deps: EndpointDeps, account: string, key: string, hash: string) {
  const createdAt = deps.clock.now();
  const existing = await deps.store.reserveIdempotencyKey({ account, key, requestHash: hash, createdAt });
  if (existing === undefined || createdAt.getTime() - existing.createdAt.getTime() < IDEMPOTENCY_TTL_MS)
    return existing;
  // Stripe forgets keys after 24 hours: the key is new again.
  await deps.store.releaseIdempotencyKey(account, key);
  return deps.store.reserveIdempotencyKey({ account, key, requestHash: hash, createdAt });
}

/**
 * Runs the endpoint after the configured latency, unless an injected failure answers first; card
 * errors and validation errors become answers that can be stored.
 */
async function simulateAndRun(
  deps: EndpointDeps,
  handler: Handler,
  ctx: EndpointContext,
): Promise<StoredResponse> {
  if (deps.latencyMs > 0) await sleep(deps.latencyMs);
  if (deps.failureRate > 0 && deps.random() < deps.failureRate) {
    throw new StripeApiError(500, {
      type: 'api_error',
      message: 'An unknown error occurred (injected by the Stripe sandbox).',
    });
  }
  try {
    return { status: 200, body: await handler(ctx) };
  } catch (error) {
    if (error instanceof StripeApiError) return { status: error.status, body: error.body };
    if (error instanceof FormError) return { status: 400, body: formErrorBody(error) };
    throw error;
  }
}
