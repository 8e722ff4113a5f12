import { sendEarly, type EarlyAnswer } from '../../shared/early-answer.ts';
import type { AppConfig } from './config.ts';
import { sessionKey } from './demo.ts';

/*
 * The policy request, sent by index.html's inline start script (start.ts) as soon as the page has
 * arrived, before Preact and the pages have loaded, so that the policy is on its way while they load
 * and render (every signed-in page shows it). The policy's first render (policy-context.tsx) takes
 * the policy itself where it has come by then; otherwise the session's first request for it
 * (session.ts) takes this answer instead of asking again, and anything the answer needs (a 401
 * refreshes the token and asks again) the session does as for its own requests. The inline script
 * and the app are two bundles, each with its own copy of this module: the request in flight is kept
 * on the page's global object.
 */

const PATH = '/policys/details';
/** As the SDK's session: a token this close to expiry is renewed before use, so it is not sent early. */
const REFRESH_MARGIN_SECONDS = 30;

const EARLY = Symbol.for('milepost.app.early-policy-request');
type Early = { readonly authorization: string; readonly answer: EarlyAnswer };
const page = globalThis as { [EARLY]?: Early | undefined };

/** The kept token's `authorization` header, where it is still good; undefined otherwise. */
function keptAuthorization(config: AppConfig): string | undefined {
  let tokens: { accessToken?: unknown; expiresAt?: unknown } | null;
  try {
    tokens = JSON.parse(localStorage.getItem(sessionKey(config)) ?? 'null') as typeof tokens;
  } catch {
    return undefined;
  }
  if (typeof tokens?.accessToken !== 'string' || typeof tokens.expiresAt !== 'number') return undefined;
  if (tokens.expiresAt - REFRESH_MARGIN_SECONDS <= Date.now() / 1000) return undefined;
  return `Bearer ${tokens.accessToken}`;
}

/** Sends the policy request where the page is a signed-in one and the kept token is still good. */
export function startPolicyRequest(config: AppConfig, onSignInPage: boolean): void {
  if (onSignInPage) return;
  const authorization = keptAuthorization(config);
  if (authorization === undefined) return;
  // The headers the SDK's client sends (sdk/src/client.ts).
  const headers: Record<string, string> = { authorization, environment: config.environment };
  if (config.client_id !== null && config.client_id !== '') headers['client_id'] = config.client_id;
  page[EARLY] = { authorization, answer: sendEarly(`${window.location.origin}${PATH}`, headers) };
}

/**
 * The policy, where the early request's 200 answer has already come for the token still kept; once
 * (the request is then spent). Undefined otherwise: the page asks through the session as usual.
 */
export function takeEarlyPolicy(config: AppConfig): unknown {
  const early = page[EARLY];
  if (early?.answer.body === undefined || early.authorization !== keptAuthorization(config)) return undefined;
  page[EARLY] = undefined;
  return early.answer.body;
}

/**
 * The early answer, for the request it stands for (the same path and token), once; undefined for any
 * other request, which goes out as usual.
 */
export function takeEarlyResponse(request: Request): Promise<Response> | undefined {
  const early = page[EARLY];
  if (early === undefined || request.method !== 'GET') return undefined;
  const url = new URL(request.url);
  if (url.pathname !== PATH || url.search !== '') return undefined;
  if (request.headers.get('authorization') !== early.authorization) return undefined;
  page[EARLY] = undefined;
  return early.answer.response;
}
