import { stat } from 'node:fs/promises';

/**
 * Builds the web apps (`npm run build:web`; `npm ci` runs it through `prepare`): the policyholder app
 * into web/dist/app and the staff console into web/dist/console. Where the build tools are not
 * installed (`npm ci --omit=dev`), it says so and leaves the service to answer /app/ and /console/ with 503.
 */
let vite: typeof import('vite');
try {
  vite = await import('vite');
} catch {
  process.stderr.write(
    'web: vite is not installed (npm ci --omit=dev?): the web apps are not built; install the dev dependencies and run npm run build:web\n',
  );
  process.exit(0);
}
const { WEB_APPS, webAppConfig } = await import('./vite.config.ts');
for (const name of WEB_APPS) {
  const started = performance.now();
  // configFile: false, so Vite does not load vite.config.ts again over the config given here.
  await vite.build({ ...webAppConfig(name), configFile: false, logLevel: 'warn' });
  await stat(new URL(`./dist/${name}/index.html`, import.meta.url));
  process.stdout.write(
    `web: built /${name}/ into web/dist/${name} in ${Math.round(performance.now() - started)} ms\n`,
  );
}
