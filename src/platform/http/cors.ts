import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * CORS for browser clients of any origin, answered before any tenancy or authentication check
 * (DESIGN: preflights carry no credentials). @fastify/cors does it all from an `onRequest` hook, which
 * runs for every matched and unmatched URL, so `Access-Control-Allow-Origin` is on every response,
 * errors included; a preflight's requested headers are echoed back (its default with no
 * `allowedHeaders`), since a `*` does not cover `Authorization` in every browser.
 */
export async function installCors(
  app: FastifyInstance,
  options: { exposedHeaders: readonly string[]; maxAgeSeconds: number },
): Promise<void> {
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    exposedHeaders: [...options.exposedHeaders],
    maxAge: options.maxAgeSeconds,
    // Tolerant preflights: some clients send an OPTIONS without Origin or Access-Control-Request-Method.
    strictPreflight: false,
  });
}

/** Every response carries the request id (the client's own, when it sent a sane one). */
export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
}
