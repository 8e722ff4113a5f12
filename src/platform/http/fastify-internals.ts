import { createRequire } from 'node:module';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The two pieces of Fastify's internal state that the request path reads or writes directly, under
 * Fastify's own symbols, because the public way costs too much for what every request does:
 * - the route a request matched: the public `request.routeOptions` builds a fresh object of twelve
 *   fields on every read (and asks the router about version constraints to fill one of them);
 * - the reply's header object: the public `reply.header()` lower-cases each name into a new string,
 *   which then has to be looked up in V8's string table to be used as a key (callgrind: about 800
 *   instructions a header, against one store of a constant key).
 * Fastify is pinned to an exact version, and the tests read all of it through the API (route labels in
 * /metrics, route log levels in the request logs, the headers of every response).
 */
const { kRouteContext, kReplyHeaders } = createRequire(import.meta.url)('fastify/lib/symbols.js') as {
  kRouteContext: symbol;
  kReplyHeaders: symbol;
};

type ReplyHeaders = Record<string, string | number | string[]>;

interface RouteContext {
  /** The route's URL pattern (`/policys/:policy_reference`); unset for unmatched URLs. */
  readonly config?: { readonly url?: string };
  /** The route's `logLevel`, or '' when it has none. */
  readonly logLevel?: string;
}

/** The route the request matched (Fastify's 404 route for an unmatched URL). */
export function routeContextOf(request: FastifyRequest): RouteContext {
  return (request as unknown as Record<symbol, RouteContext>)[kRouteContext] ?? {};
}

/**
 * The headers the reply will be sent with, by lower-case name: what `reply.header()` writes. Only for
 * names that are constants in lower case and are not `set-cookie`, which `reply.header()` merges.
 */
export function replyHeadersOf(reply: FastifyReply): ReplyHeaders {
  const headers = (reply as unknown as Record<symbol, ReplyHeaders | undefined>)[kReplyHeaders];
  if (headers === undefined) throw new Error('this Fastify keeps no reply headers under kReplyHeaders');
  return headers;
}
