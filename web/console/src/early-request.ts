/*
 * The staff session request, sent by the entry script as soon as it runs, before Preact and the pages
 * have loaded: every page waits on it (signed in or not, and as whom). The console's first request for
 * it (api.ts) takes this answer instead of asking again.
 */

const PATH = '/staff/session';

let early: Promise<Response> | undefined;

/** Sends the session request (the staff cookie goes with it, as with every same-origin request). */
export function startSessionRequest(): void {
  early = fetch(`${window.location.origin}${PATH}`, { headers: { accept: 'application/json' } });
}

/** The early answer, for a GET of the session, once; undefined for any other request. */
export function takeEarlyResponse(request: Request): Promise<Response> | undefined {
  if (early === undefined || request.method !== 'GET') return undefined;
  const url = new URL(request.url);
  if (url.pathname !== PATH || url.search !== '') return undefined;
  const response = early;
  early = undefined;
  return response;
}
