import { configInPage } from '../../shared/web-config.ts';
import type { ConsoleConfig } from './config.ts';
import { startSessionRequest } from './early-request.ts';

/*
 * The page's first work, before any of the console has loaded: send the staff session request and
 * read the settings the service put in the page. index.html runs it inline (web/build-plugins.ts
 * `inlineStart`, from inline-start.ts), so the request leaves as soon as the page has arrived rather
 * than after a script download; the console's entry calls it again and gets what the inline copy found.
 * The two copies are two bundles, so what they share goes through a global, as the early request does.
 */

const STARTED = Symbol.for('milepost.console.started');
type Started = { readonly config: ConsoleConfig | undefined };

/**
 * The settings in the page (undefined: none, and the console asks config.json), the session request
 * sent. Idempotent: the work is done once per page.
 */
export function start(): ConsoleConfig | undefined {
  const page = globalThis as { [STARTED]?: Started };
  const started = page[STARTED];
  if (started !== undefined) return started.config;
  startSessionRequest();
  const config = configInPage() as ConsoleConfig | undefined;
  page[STARTED] = { config };
  return config;
}
