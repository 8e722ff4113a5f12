import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from './engine.ts';
import { StripeApiError } from './errors.ts';
import type { FormBody } from './form.ts';
import type { SandboxStore } from './store.ts';

/** How long a key found issued is accepted before the store is asked again. */
const ISSUED_KEY_TRUST_MS = 60_000;

/** `publishable`: a browser with a publishable key may create cards (as Stripe.js does), nothing else. */
export type Access = 'secret' | 'client_secret' | 'publishable';

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
 * Whether the sandbox issued a secret key, asking `store`.
 * NOTE: keys are never withdrawn, so a key found issued is trusted for a while without asking the
 * store again (each API call would otherwise cost a lookup); one not found is looked up every time,
 * since it may have been issued since (a company created in another process).
 */
export function createIssuedKeyCheck(store: SandboxStore): (secretKey: string) => Promise<boolean> {
  const issuedUntilMs = new Map<string, number>();
  return async (secretKey) => {
    const nowMs = performance.now();
    if ((issuedUntilMs.get(secretKey) ?? 0) > nowMs) return true;
    const issued = await store.isIssuedKey(secretKey);
    if (issued) issuedUntilMs.set(secretKey, nowMs + ISSUED_KEY_TRUST_MS);
    return issued;
  };
}

/**
 * Before the body is parsed and before routing, as on Stripe: a key in the Authorization header that
 * names no account is 401 on every route, known or not, whatever the body.
 */
export function registerApiKeyCheck(
  app: FastifyInstance,
  isIssued: (secretKey: string) => Promise<boolean>,
): void {
  app.addHook('onRequest', async (request) => {
    const key = headerKey(request);
    if (key === undefined || key === '' || key.startsWith('pk_test_')) return;
    if (!isTestSecretKey(key) || !(await isIssued(key))) throw invalidApiKey(key);
  });
}

/**
 * Secret keys the sandbox issued (`sk_test_…`, one account each) may do anything; a browser (no key, or
 * `pk_test_…`, in the Authorization header or as Stripe.js sends it, a `key` parameter) only what its
 * client secret allows, and create cards. Any other key, a made-up `sk_test_…` among them, is refused.
 */
export async function authenticate(
  request: FastifyRequest,
  access: Access,
  isIssued: (secretKey: string) => Promise<boolean>,
): Promise<{ caller: Caller; account: string }> {
  let key = headerKey(request);
  if (key === undefined && access !== 'secret') key = keyParameter(request);
  if (key !== undefined && isTestSecretKey(key) && (await isIssued(key))) {
    const account = `acct_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
    return { caller: { kind: 'secret' }, account };
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
