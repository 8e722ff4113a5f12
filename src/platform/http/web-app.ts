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
  /** Origins the pages may use besides their own (a tile server, Stripe.js); none by default. */
  readonly allow?: Partial<Record<'img' | 'script' | 'frame' | 'connect', readonly string[]>>;
}

/**
 * The pages' own content, and what `allow` names: scripts and styles from this origin, no plug-ins,
 * never framed by another site.
 */
function contentSecurityPolicy(allow: WebAppOptions['allow'] = {}): string {
  const with_ = (base: string, more: readonly string[] = []) => [base, ...more].join(' ');
  return [
    "default-src 'self'",
    with_("script-src 'self'", allow.script),
    "style-src 'self' 'unsafe-inline'",
    with_("img-src 'self' data:", allow.img),
    with_("connect-src 'self'", allow.connect),
    with_("frame-src 'none'", allow.frame).replace("'none' ", ''),
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * Serves a built single-page app as static files: hashed assets cached for ever, `index.html` for
 * every other path under the prefix (client-side routes), and `config.json` from the settings. A
 * missing build (a checkout where `npm run build:web` has not run) answers 503, never a crash.
 */
export async function installWebApp(app: FastifyInstance, options: WebAppOptions): Promise<void> {
  const { prefix, root } = options;
  const csp = contentSecurityPolicy(options.allow);
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
            reply.header('content-security-policy', csp);
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
          void reply.header('cache-control', 'no-cache').header('content-security-policy', csp);
          return reply.sendFile('index.html');
        }
        return sendProblem(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${url}`);
      });
    },
    { prefix: prefix.replace(/\/$/, '') },
  );
}
