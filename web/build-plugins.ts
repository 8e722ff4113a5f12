import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { HtmlTagDescriptor, Plugin } from 'vite';

/**
 * `<link rel="modulepreload">` in index.html for the chunks the entry script imports with `import()`
 * (the app itself: Preact, the shell, the first page) and what they import, so the browser fetches them
 * beside the small entry script rather than after it has run. Chunks imported from those (the other
 * pages, Leaflet, Stripe) are not preloaded: they load when their page is shown.
 */
export function preloadEntryImports(): Plugin {
  let base = '/';
  return {
    name: 'milepost:preload-entry-imports',
    apply: 'build',
    configResolved(config) {
      base = config.base;
    },
    // V8's explicit compile hint, the file's first line: every function of the app's chunk runs on the
    // first render, so it is compiled eagerly while the file streams in (on a background thread)
    // rather than lazily on the main thread function by function. Written into the file once Vite has
    // added its own first lines, which it does after the bundle hooks.
    async writeBundle(options, bundle) {
      const outputs = Object.values(bundle);
      const app = outputs.flatMap((output) =>
        output.type === 'chunk' && output.isEntry ? output.dynamicImports : [],
      );
      for (const fileName of app) {
        const file = path.join(options.dir ?? '', fileName);
        await writeFile(file, `//# allFunctionsCalledOnLoad\n${await readFile(file, 'utf8')}`);
      }
    },
    transformIndexHtml: {
      order: 'post',
      handler(_html, { bundle, chunk }) {
        if (bundle === undefined || chunk === undefined) return [];
        const seen = new Set<string>();
        const tags: HtmlTagDescriptor[] = [];
        const visit = (fileName: string): void => {
          const next = bundle[fileName];
          if (seen.has(fileName) || next?.type !== 'chunk') return;
          seen.add(fileName);
          tags.push({
            tag: 'link',
            attrs: { rel: 'modulepreload', crossorigin: true, href: `${base}${fileName}` },
            injectTo: 'head',
          });
          for (const css of next.viteMetadata?.importedCss ?? [])
            tags.push({
              tag: 'link',
              attrs: { rel: 'stylesheet', crossorigin: true, href: `${base}${css}` },
              injectTo: 'head',
            });
          next.imports.forEach(visit);
        };
        // The entry and its own static imports index.html names already.
        for (const fileName of [chunk.fileName, ...chunk.imports]) seen.add(fileName);
        chunk.dynamicImports.forEach(visit);
        return tags;
      },
    },
  };
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
 * One chunk for the first render: `src/boot.tsx` under `root` and every module it imports statically
 * (the runtime, the shell, the first page, the SDK), less what the entry script (`src/main.tsx`)
 * imports itself. Left to the bundler they are several chunks (each module that some later page also
 * imports splits off), each a request of its own on a cold load. Pages loaded later import what they
 * share from this chunk. For `build.rolldownOptions.output.codeSplitting.groups`.
 */
export function firstRenderGroup(root: string): {
  debugName: string;
  includeDependenciesRecursively: boolean;
  name: (id: string, ctx: ChunkingContext) => string | null;
} {
  let inFirstRender: Set<string> | undefined;
  const reachable = (from: string, ctx: ChunkingContext): Set<string> => {
    const seen = new Set<string>();
    const visit = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const next of ctx.getModuleInfo(id)?.importedIds ?? []) visit(next);
    };
    visit(from);
    return seen;
  };
  return {
    debugName: 'first render',
    // The entry's own modules, which boot.tsx imports too, stay with the entry.
    includeDependenciesRecursively: false,
    name(id, ctx) {
      if (inFirstRender === undefined) {
        const entry = reachable(path.join(root, 'src', 'main.tsx'), ctx);
        const boot = reachable(path.join(root, 'src', 'boot.tsx'), ctx);
        inFirstRender = new Set([...boot].filter((module) => !entry.has(module)));
      }
      return inFirstRender.has(id) ? 'boot' : null;
    },
  };
}
