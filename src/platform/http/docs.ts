import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

const PREFIX = '/docs';
const FORWARDED_HEADERS = ['content-type', 'cache-control', 'location'] as const;

/**
 * Scalar's API reference at /docs, loaded on the first request for it: its page bundle is 4 MB of
 * JavaScript that cost every process ~22 MB of memory at start, and most processes never serve it.
 * The plugin runs in an app of its own, which these routes forward to.
 */
export function installDocs(app: FastifyInstance, openApiUrl: string): void {
  let docs: Promise<FastifyInstance> | undefined;
  const load = async (): Promise<FastifyInstance> => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const inner = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
    await inner.register(scalar, {
      routePrefix: PREFIX,
      configuration: {
        url: openApiUrl,
        withDefaultFonts: false,
        title: 'Milepost API',
        // Hosted-only features (AI agent, MCP, the developer toolbar's deploy and share) need Scalar's
        // servers, which a self-hosted service does not reach.
        agent: { disabled: true },
        mcp: { disabled: true },
        showDeveloperTools: 'never',
      },
    });
    await inner.ready();
    return inner;
  };
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    docs ??= load().catch((error: unknown) => {
      docs = undefined; // the next request tries again
      throw error;
    });
    const answer = await (await docs).inject({ method: 'GET', url: request.url });
    // Not one of the plugin's pages: the service's own 404, as problem+json.
    if (answer.statusCode === 404) {
      reply.callNotFound();
      return reply;
    }
    for (const name of FORWARDED_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) void reply.header(name, value);
    }
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };
  app.get(PREFIX, { schema: { hide: true } }, forward);
  app.get(`${PREFIX}/*`, { schema: { hide: true } }, forward);
}
