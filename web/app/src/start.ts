import { configInPage } from '../../shared/web-config.ts';
import { effectiveConfig, type AppConfig } from './config.ts';
import { startPolicyRequest } from './early-request.ts';

/*
 * The page's first work, before any of the app has loaded: read the settings the service put in the
 * page and send the policy request. index.html runs it inline (web/build-plugins.ts `inlineStart`, from
 * inline-start.ts), so the request leaves as soon as the page has arrived rather than after a script
 * download; the app's entry calls it again and gets what the inline copy found. The two copies are two
 * bundles, so what they share goes through a global, as the early request's answer does.
 */

const STARTED = Symbol.for('milepost.app.started');
type Started = { readonly config: AppConfig | undefined };

/**
 * The settings the app runs with (undefined: the page carried none, and the app asks config.json),
 * the policy request sent where the page is a signed-in one. Idempotent: the work is done once per page.
 */
export function start(): AppConfig | undefined {
  const page = globalThis as { [STARTED]?: Started };
  const started = page[STARTED];
  if (started !== undefined) return started.config;
  const inPage = configInPage() as AppConfig | undefined;
  const config = inPage === undefined ? undefined : effectiveConfig(inPage);
  const onSignInPage = /\/sign-in\/?$/.test(window.location.pathname);
  if (config !== undefined) startPolicyRequest(config, onSignInPage);
  page[STARTED] = { config };
  return config;
}
