import { fileURLToPath } from 'node:url';
import { defineConfig, type UserConfig } from 'vite';
import { eagerCompileEntry, firstRenderGroup, inlineStart, precompress } from './build-plugins.ts';
import { gbOutline } from './gb-outline.ts';

/** The web apps: each is built from web/<name> to web/dist/<name> and served by the service at /<name>/. */
export const WEB_APPS = ['app', 'console'] as const;
export type WebAppName = (typeof WEB_APPS)[number];

/** One app's build: the policyholder app (`app`) or the staff console (`console`). */
export function webAppConfig(name: WebAppName): UserConfig {
  return {
    root: fileURLToPath(new URL(`./${name}`, import.meta.url)),
    base: `/${name}/`,
    logLevel: 'warn',
    // Both draw journey maps over the outline (web/shared/map, which both apps import). index.html
    // carries the stylesheet and the start script (the first data request) inline; the entry chunk is
    // the first render, compiled eagerly; assets are compressed at build.
    plugins: [
      gbOutline(),
      inlineStart(fileURLToPath(new URL(`./${name}/src/inline-start.ts`, import.meta.url))),
      eagerCompileEntry(fileURLToPath(new URL(`./${name}/src/main.tsx`, import.meta.url))),
      precompress(),
    ],
    // The code is written against React's API and runs on Preact's compatibility layer (a fraction of
    // react-dom's size to download, compile and run before the first render): 'react', 'react-dom' and
    // the automatic JSX runtime, compiled by Vite's own transformer, resolve to preact/compat.
    oxc: { jsx: { runtime: 'automatic' } },
    resolve: {
      alias: [
        { find: /^react$/, replacement: 'preact/compat' },
        { find: /^react-dom$/, replacement: 'preact/compat' },
        { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
        { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
        { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/compat/jsx-dev-runtime' },
      ],
    },
    build: {
      outDir: fileURLToPath(new URL(`./dist/${name}`, import.meta.url)),
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      // Browsers that run these apps know modulepreload; the polyfill would be bytes in the entry.
      modulePreload: { polyfill: false },
      rolldownOptions: {
        output: {
          codeSplitting: { groups: [firstRenderGroup(fileURLToPath(new URL(`./${name}`, import.meta.url)))] },
        },
      },
    },
  };
}

/** `vite --config web/vite.config.ts` works on the policyholder app; `WEB_APP=console` picks the console. */
export default defineConfig(webAppConfig(process.env['WEB_APP'] === 'console' ? 'console' : 'app'));
