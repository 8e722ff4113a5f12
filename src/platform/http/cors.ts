import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { replyHeadersOf } from './fastify-internals.ts';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** A comma-separated list of header names (RFC 9110 tokens): what a preflight may echo back. */
const HEADER_NAME_LIST = /^[!#$%&'*+.^`|~\w-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^`|~\w-]+)*$/;

/**
 * What every response carries for CORS (any origin) and the request id, errors and unmatched URLs
 * included, or browsers hide them from the page; and, for a browser's cross-origin request, which
 * response headers the page may read. That last header only answers a request with an `Origin`, which
 * browsers always send cross-origin and devices and servers do not: each header a response carries
 * costs Node about 1,800 instructions to validate and write (callgrind, `GET /healthz`), and nothing
 * but a browser reads this one. The one response shared caches may keep (the JWKS) varies on Origin.
 * Fastify's log controller calls the returned function first thing for every request (see
 * `createMeteredLogController`): an `onRequest` hook did the same with a hook pass more per request.
 *
 * Written here rather than with @fastify/cors: with one fixed policy the headers are constants, while
 * the plugin copied its options per request, about 1 µs of the ~11 µs a `GET /healthz` costs
 * (`npm run bench -- healthz`).
 */
export function corsResponseHeaders(
  exposedHeaders: readonly string[],
): (request: FastifyRequest, reply: FastifyReply) => void {
  const exposed = exposedHeaders.join(', ');
  return (request, reply) => {
    // Straight into the reply's header object: constant lower-case names (see fastify-internals.ts).
    const headers = replyHeadersOf(reply);
    headers['x-request-id'] = request.id;
    headers['access-control-allow-origin'] = '*';
    if (request.headers.origin !== undefined) headers['access-control-expose-headers'] = exposed;
  };
}

/**
 * Preflights on any path, answered without credentials before any authentication, as browsers send
 * none; any request header is allowed. `maxAgeSeconds`: how long a browser may keep the answer.
 */
export function installPreflight(app: FastifyInstance, maxAgeSeconds: number): void {
  const maxAge = String(maxAgeSeconds);
  app.options('*', { schema: { hide: true }, logLevel: 'warn' }, (request, reply) => {
    const requested = request.headers['access-control-request-headers'];
    void reply
      .code(204)
      .header('access-control-allow-methods', ALLOWED_METHODS)
      .header('access-control-max-age', maxAge)
      .header('vary', 'Access-Control-Request-Headers')
      // Safari waits for a body on a 204 that does not say it has none.
      .header('content-length', '0');
    // Any header is allowed: the requested ones are echoed, when they are a well-formed list.
    if (typeof requested === 'string' && HEADER_NAME_LIST.test(requested))
      void reply.header('access-control-allow-headers', requested);
    return reply.send();
  });
}
