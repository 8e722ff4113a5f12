import type { AppConfig } from './config.ts';

/*
 * Demo mode: `/app/?demo` runs the app against the service's `mock` environment, which signs anyone in
 * and answers every page with a made-up policy's data, storing nothing. The `?demo` query stays on every
 * page (router.ts keeps the query), and the demo keeps its session apart from a real one.
 */

/** Whether the address asks for the demo. */
export const isDemo = (): boolean => new URLSearchParams(window.location.search).has('demo');

/** The settings the demo runs with: the service's, in the mock environment. */
export const demoConfig = (config: AppConfig): AppConfig => ({ ...config, environment: 'mock' });

/** The mock environment signs in any username and password; the demo uses these. */
export const DEMO_USERNAME = 'demo';
export const DEMO_PASSWORD = 'demo';

/** Where the demo's session is kept: never the real one's key, so the two never meet. */
export const sessionKey = (config: AppConfig): string =>
  config.environment === 'mock' ? 'milepost.demo-session' : 'milepost.session';

/** The app without `?demo`: the page it is on, with the rest of the query. */
export function leaveDemoHref(): string {
  const query = new URLSearchParams(window.location.search);
  query.delete('demo');
  const rest = query.toString();
  return `${window.location.pathname}${rest === '' ? '' : `?${rest}`}`;
}
