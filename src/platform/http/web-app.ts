import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './problem.ts';

export interface WebAppOptions {
  /** Where it is served, with slashes: `/app/`. */
  readonly prefix: string;
  /** The built files (`index.html`, `assets/`). */
  readonly root: string;
  /** The app's settings: in `index.html` (a JSON block, `#web-config`) and at `<prefix>config.json`. */
  readonly config: Readonly<Record<string, unknown>>;
  /** The command that builds it, named when the build is missing. */
  readonly buildCommand: string;
  /** Origins the pages may use besides their own (a tile server, Stripe.js); none by default. */
  readonly allow?: Partial<Record<'img' | 'script' | 'frame' | 'connect', readonly string[]>>;
}

/**
 * The pages' own content, and what `allow` names: scripts and styles from this origin, the page's own
 * inline scripts by their hashes (`'sha256-…'`, never 'unsafe-inline'), no plug-ins, never framed by
 * another site.
 */
function contentSecurityPolicy(
  allow: WebAppOptions['allow'] = {},
  inlineScriptHashes: readonly string[] = [],
): string {
  const with_ = (base: string, more: readonly string[] = []) => [base, ...more].join(' ');
  return [
    "default-src 'self'",
    with_("script-src 'self'", [...(allow.script ?? []), ...inlineScriptHashes]),
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

/** The id of the JSON block in index.html that carries the settings (web/shared/web-config.ts reads it). */
export const CONFIG_ELEMENT_ID = 'web-config';

/**
 * index.html with the settings in it, as a `<script type="application/json">` block: data, never run,
 * so `script-src 'self'` stays strict. `<`, `>` and `&` are escaped so that no value can close the block.
 */
export function withConfig(html: string, config: Readonly<Record<string, unknown>>): string {
  const json = JSON.stringify(config)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026');
  const block = `<script type="application/json" id="${CONFIG_ELEMENT_ID}">${json}</script>`;
  // A function, not a string, as the replacement: a `$&` in a setting is text, not a pattern.
  return html.includes('</head>')
    ? html.replace('</head>', () => `  ${block}\n  </head>`)
    : `${html}${block}`;
}

/** Script types a browser runs; any other (`application/json`) is a data block, outside the policy. */
const RUN_TYPES = new Set(['', 'module', 'text/javascript', 'application/javascript']);

/**
 * The CSP sources (`'sha256-…'`) of the scripts written into `html` itself, which the build puts there
 * (the start script that sends the first data request, web/build-plugins.ts): a browser runs an inline
 * script only if its text hashes to a source the policy names. The page is the build's own output, not
 * input from a client, so a pattern is enough to find its script elements.
 */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const [, attributes = '', text = ''] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    if (/\bsrc\s*=/i.test(attributes)) continue;
    const type = /\btype\s*=\s*["']?([^"'\s>]*)/i.exec(attributes)?.[1]?.toLowerCase() ?? '';
    if (!RUN_TYPES.has(type)) continue;
    hashes.push(`'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);
  }
  return hashes;
}

interface RenderedPage {
  readonly modifiedMs: number;
  readonly csp: string;
  readonly identity: Buffer;
  readonly br: Buffer;
  readonly gzip: Buffer;
}

/**
 * The page as sent, with its compressed forms, made once per build of index.html (read again when the
 * file changes, so a rebuild under a running service is picked up as the static assets are).
 */
function pageRenderer(
  file: string,
  config: Readonly<Record<string, unknown>>,
  allow: WebAppOptions['allow'],
): () => RenderedPage {
  let rendered: RenderedPage | undefined;
  return () => {
    const modifiedMs = statSync(file).mtimeMs;
    if (rendered?.modifiedMs === modifiedMs) return rendered;
    const built = readFileSync(file, 'utf8');
    const identity = Buffer.from(withConfig(built, config));
    rendered = {
      modifiedMs,
      csp: contentSecurityPolicy(allow, inlineScriptHashes(built)),
      identity,
      br: brotliCompressSync(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
      gzip: gzipSync(identity, { level: 9 }),
    };
    return rendered;
  };
}

/** The encoding to answer with: brotli, then gzip, where the request accepts it (q=0 refuses). */
function chooseEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | undefined {
  const accepted = new Set(
    (acceptEncoding ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0]?.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

/**
 * Serves a built single-page app: hashed assets cached for ever (with the brotli and gzip files the
 * build wrote beside them), and for every other path under the prefix (client-side routes) `index.html`
 * with the settings in it, so the app's first request is for its data rather than for its settings.
 * `config.json` answers the settings too. A missing build (a checkout where `npm run build:web` has not
 * run) answers 503, never a crash.
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

  const page = pageRenderer(path.join(root, 'index.html'), options.config, options.allow);
  // index.html is revalidated on every visit (no-cache), so a release is picked up at once.
  const sendPage = (request: FastifyRequest, reply: FastifyReply) => {
    const rendered = page();
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    void reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', rendered.csp)
      .header('vary', 'accept-encoding')
      .type('text/html; charset=utf-8');
    if (encoding === undefined) return reply.send(rendered.identity);
    return reply.header('content-encoding', encoding).send(encoding === 'br' ? rendered.br : rendered.gzip);
  };

  // In a scope of its own, so that its not-found handler answers for the prefix only.
  await app.register(
    async (scope) => {
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        index: false,
        wildcard: true,
        schemaHide: true,
        preCompressed: true,
        // Assets carry a content hash in their names.
        setHeaders: (reply, filePath) => {
          if (filePath.includes(`${path.sep}assets${path.sep}`))
            reply.header('cache-control', 'public, max-age=31536000, immutable');
          else reply.header('cache-control', 'no-cache');
        },
      });
      scope.get('/', { schema: { hide: true } }, async (request, reply) => {
        // `/app` (no slash): the page's relative asset paths need the slash.
        if ((request.url.split('?')[0] ?? '') === prefix.slice(0, -1)) return reply.redirect(prefix, 301);
        return sendPage(request, reply);
      });
      scope.get('/index.html', { schema: { hide: true } }, async (request, reply) =>
        sendPage(request, reply),
      );
      // A client-side route (/app/policy): the app's page, which routes itself. A missing asset stays 404.
      scope.setNotFoundHandler(async (request, reply) => {
        const url = request.url.split('?')[0] ?? '';
        if (url === prefix.slice(0, -1)) return reply.redirect(prefix, 301);
        if (
          request.method === 'GET' &&
          url.startsWith(prefix) &&
          !url.startsWith(`${prefix}assets/`) &&
          !path.extname(url)
        )
          return sendPage(request, reply);
        return sendProblem(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${url}`);
      });
    },
    { prefix: prefix.replace(/\/$/, '') },
  );
}
