import { createRequire } from 'node:module';
import type { FastifyRequest } from 'fastify';

/**
 * Fastify's own record of the route a request matched, under its internal `kRouteContext` symbol.
 * The public `request.routeOptions` builds a fresh object of twelve fields on every read (and asks the
 * router about version constraints to fill one of them), too much for what every request's logger and
 * metrics need. Fastify is pinned to an exact version, and the tests read both fields through the API
 * (route labels in /metrics, route log levels in the request logs).
 */
const { kRouteContext } = createRequire(import.meta.url)('fastify/lib/symbols.js') as {
  kRouteContext: symbol;
};

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
