import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { sendProblem } from './problem.ts';

export interface WebAppOptions {
  /** Where it is served, with slashes: `/app/`. */
  readonly prefix: string;
  /** The built files (`index.html`, `assets/`). */
  readonly root: string;
  /** What the app reads at `<prefix>config.json`. */
  readonly config: Readonly<Record<string, unknown>>;
  /** The command that builds it, named when the build is missing. */
  readonly buildCommand: string;
}

/** The pages' own content only: scripts and styles from this origin, no frames, no plug-ins. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/**
 * Serves a built single-page app as static files: hashed assets cached for ever, `index.html` for
 * every other path under the prefix (client-side routes), and `config.json` from the settings. A
 * missing build (a checkout where `npm run build:web` has not run) answers 503, never a crash.
 */
export async function installWebApp(app: FastifyInstance, options: WebAppOptions): Promise<void> {
  const { prefix, root } = options;
  app.get(`${prefix}config.json`, { schema: { hide: true } }, async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    return options.config;
  });

  if (!existsSync(path.join(root, 'index.html'))) {
    const missing = async (_request: unknown, reply: Parameters<typeof sendProblem>[0]) =>
      sendProblem(
        reply,
        'SERVICE_UNAVAILABLE',
        `The web app at ${prefix} is not built: run \`${options.buildCommand}\` (npm ci runs it) and restart the service`,
      );
    app.get(prefix, { schema: { hide: true } }, missing);
    app.get(`${prefix}*`, { schema: { hide: true } }, missing);
    return;
  }

  // In a scope of its own, so that its not-found handler answers for the prefix only.
  await app.register(
    async (scope) => {
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        index: ['index.html'],
        wildcard: true,
        schemaHide: true,
        // Assets carry a content hash in their names; index.html must be revalidated to pick up a release.
        setHeaders: (reply, filePath) => {
          if (filePath.includes(`${path.sep}assets${path.sep}`))
            reply.header('cache-control', 'public, max-age=31536000, immutable');
          else {
            reply.header('cache-control', 'no-cache');
            reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
          }
        },
      });
      // A client-side route (/app/policy): the app's page, which routes itself. A missing asset stays 404.
      scope.setNotFoundHandler(async (request, reply) => {
        const url = request.url.split('?')[0] ?? '';
        if (url === prefix.slice(0, -1)) return reply.redirect(prefix, 301);
        if (
          request.method === 'GET' &&
          url.startsWith(prefix) &&
          !url.startsWith(`${prefix}assets/`) &&
          !path.extname(url)
        ) {
          void reply
            .header('cache-control', 'no-cache')
            .header('content-security-policy', CONTENT_SECURITY_POLICY);
          return reply.sendFile('index.html');
        }
        return sendProblem(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${url}`);
      });
    },
    { prefix: prefix.replace(/\/$/, '') },
  );
}
