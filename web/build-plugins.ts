import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { build, type Plugin, type ResolvedConfig } from 'vite';

/**
 * V8's explicit compile hint as the first line of the chunk that holds `entry` (`src/main.tsx`, the
 * first render: Preact, the shell, the first page; see `firstRenderGroup`) and of the chunks it imports
 * statically: every function of them runs on the first render, so they are compiled eagerly while the
 * file streams in (on a background thread) rather than lazily on the main thread function by function.
 * Written into the files once Vite has added its own first lines, which it does after the bundle hooks.
 */
export function eagerCompileEntry(entry: string): Plugin {
  return {
    name: 'milepost:eager-compile-entry',
    apply: 'build',
    async writeBundle(options, bundle) {
      const firstRender = new Set<string>();
      const visit = (fileName: string): void => {
        const chunk = bundle[fileName];
        if (firstRender.has(fileName) || chunk?.type !== 'chunk') return;
        firstRender.add(fileName);
        chunk.imports.forEach(visit);
      };
      for (const output of Object.values(bundle))
        if (output.type === 'chunk' && output.moduleIds.includes(entry)) visit(output.fileName);
      if (firstRender.size === 0) throw new Error(`eagerCompileEntry: no chunk holds ${entry}`);
      for (const fileName of firstRender) {
        const file = path.join(options.dir ?? '', fileName);
        await writeFile(file, `//# allFunctionsCalledOnLoad\n${await readFile(file, 'utf8')}`);
      }
    },
  };
}

/** Text that would end an inline `<script>` or `<style>` element early, or start a comment in it. */
const ENDS_ELEMENT = /<\/(?:script|style)|<!--/i;

/**
 * Makes index.html one response for the first render's start: the stylesheet the entry imports goes
 * into the page as a `<style>` element, and `startEntry` (the settings read and the first data request
 * sent, `src/inline-start.ts`), bundled on its own, as an inline classic script at the top of the body.
 * The data request then leaves as soon as the page has arrived, while the entry chunk downloads, rather
 * than once a script file and the stylesheet (which module scripts wait for) have come. The service
 * allows the inline script by its SHA-256 in the content security policy (src/platform/http/web-app.ts),
 * never by 'unsafe-inline'. The stylesheet's file stays in assets/ for anything that names it.
 */
export function inlineStart(startEntry: string): Plugin {
  let base = '/';
  let target: ResolvedConfig['build']['target'] = false;
  return {
    name: 'milepost:inline-start',
    apply: 'build',
    configResolved(config) {
      base = config.base;
      target = config.build.target;
    },
    transformIndexHtml: {
      order: 'post',
      async handler(html, { bundle }) {
        if (bundle === undefined) return html;
        const styled = html.replace(
          /<link rel="stylesheet"(?: crossorigin)? href="([^"]+\.css)">/g,
          (tag, href: string) => {
            const asset = bundle[href.slice(base.length)];
            if (asset?.type !== 'asset') throw new Error(`inlineStart: ${href} is not in the bundle`);
            const css =
              typeof asset.source === 'string' ? asset.source : new TextDecoder().decode(asset.source);
            if (ENDS_ELEMENT.test(css))
              throw new Error(`inlineStart: ${href} cannot be inlined as it stands`);
            // The link stays, disabled (a disabled stylesheet is not fetched): Vite's loader for a later
            // page's chunk skips a stylesheet the page already links, rather than adding it again.
            return `<style>${css.trim()}</style>\n    <link rel="stylesheet" href="${href}" disabled>`;
          },
        );
        const script = await bundleAlone(startEntry, target);
        return { html: styled, tags: [{ tag: 'script', children: script, injectTo: 'body-prepend' }] };
      },
    },
  };
}

/** `entry` and what it imports as one minified classic script (an IIFE), for an inline `<script>`. */
async function bundleAlone(entry: string, target: ResolvedConfig['build']['target']): Promise<string> {
  const output = await build({
    configFile: false,
    logLevel: 'warn',
    publicDir: false,
    build: {
      write: false,
      minify: true,
      target,
      lib: { entry, formats: ['iife'], name: 'start' },
    },
  });
  const outputs = Array.isArray(output) ? output : [output];
  const chunk = outputs.flatMap((o) => ('output' in o ? o.output : [])).find((o) => o.type === 'chunk');
  if (chunk === undefined) throw new Error(`inlineStart: bundling ${entry} gave no script`);
  const code = chunk.code.trim();
  if (ENDS_ELEMENT.test(code) || code.includes('\r'))
    throw new Error(`inlineStart: ${entry}'s bundle cannot be inlined as it stands`);
  return code;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
/** Below this a compressed copy saves too little to be worth a file (fastify-static skips small ones too). */
const MIN_BYTES = 1024;

/**
 * Writes `<file>.br` (quality 11) and `<file>.gz` (level 9) beside each built asset of at least 1 kB,
 * which the service sends to browsers that accept them (@fastify/static's `preCompressed`): compressed
 * once at build time, at the highest levels, rather than on every request.
 */
export function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'milepost:precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const assets = path.join(outDir, 'assets');
      for (const name of await readdir(assets)) {
        if (!/\.(?:js|css|svg|json|txt)$/.test(name)) continue;
        const file = path.join(assets, name);
        const content = await readFile(file);
        if (content.length < MIN_BYTES) continue;
        await writeFile(`${file}.br`, await brotli(content, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }));
        await writeFile(`${file}.gz`, await gzipAsync(content, { level: 9 }));
      }
    },
  };
}

interface ChunkingContext {
  getModuleInfo(id: string): { readonly importedIds: readonly string[] } | null;
}

/**
 * One chunk for the first render: the entry `src/main.tsx` under `root` and every module it imports
 * statically (the runtime, the shell, the first page, the SDK). Left to the bundler they are several
 * chunks (each module that some later page also imports splits off), each a request of its own on a
 * cold load. Pages loaded later import what they share from this chunk. For
 * `build.rolldownOptions.output.codeSplitting.groups`.
 */
export function firstRenderGroup(root: string): {
  debugName: string;
  name: (id: string, ctx: ChunkingContext) => string | null;
} {
  let inFirstRender: Set<string> | undefined;
  return {
    debugName: 'first render',
    name(id, ctx) {
      if (inFirstRender === undefined) {
        const seen = new Set<string>();
        const visit = (module: string): void => {
          if (seen.has(module)) return;
          seen.add(module);
          for (const next of ctx.getModuleInfo(module)?.importedIds ?? []) visit(next);
        };
        visit(path.join(root, 'src', 'main.tsx'));
        inFirstRender = seen;
      }
      return inFirstRender.has(id) ? 'index' : null;
    },
  };
}
