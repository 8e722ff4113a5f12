import { stat } from 'node:fs/promises';

/**
 * Builds the web apps (`npm run build:web`; `npm ci` runs it through `prepare`). Where the build tools
 * are not installed (`npm ci --omit=dev`), it says so and leaves the service to answer /app/ with 503.
 */
const started = performance.now();
let vite: typeof import('vite');
try {
  vite = await import('vite');
} catch {
  process.stderr.write(
    'web: vite is not installed (npm ci --omit=dev?): the web app is not built; install the dev dependencies and run npm run build:web\n',
  );
  process.exit(0);
}
const configFile = new URL('./vite.config.ts', import.meta.url).pathname;
await vite.build({ configFile, logLevel: 'warn' });
const index = new URL('./dist/app/index.html', import.meta.url);
await stat(index);
process.stdout.write(`web: built /app/ into web/dist/app in ${Math.round(performance.now() - started)} ms\n`);
