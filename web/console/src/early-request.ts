import { sendEarly, type EarlyAnswer } from '../../shared/early-answer.ts';

/*
 * The staff session request, sent by index.html's inline start script (start.ts) as soon as the page
 * has arrived, before Preact and the pages have loaded: every page waits on it (signed in or not, and
 * as whom). The console's first render (console-app.tsx) takes the session itself where it has come
 * by then; otherwise its first request for it (api.ts) takes this answer instead of asking again. The
 * inline script and the console are two bundles, each with its own copy of this module: the request in
 * flight is kept on the page's global object.
 */

const PATH = '/staff/session';
const EARLY = Symbol.for('milepost.console.early-session-request');
const page = globalThis as { [EARLY]?: EarlyAnswer | undefined };

/** Sends the session request (the staff cookie goes with it, as with every same-origin request). */
export function startSessionRequest(): void {
  page[EARLY] = sendEarly(`${window.location.origin}${PATH}`, { accept: 'application/json' });
}

/** The session, where the early request's 200 answer has already come; once. Undefined otherwise. */
export function takeEarlySession(): unknown {
  const body = page[EARLY]?.body;
  if (body !== undefined) page[EARLY] = undefined;
  return body;
}

/** The early answer, for a GET of the session, once; undefined for any other request. */
export function takeEarlyResponse(request: Request): Promise<Response> | undefined {
  const early = page[EARLY];
  if (early === undefined || request.method !== 'GET') return undefined;
  const url = new URL(request.url);
  if (url.pathname !== PATH || url.search !== '') return undefined;
  page[EARLY] = undefined;
  return early.response;
}
