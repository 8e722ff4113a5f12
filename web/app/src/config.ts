import { loadWebConfig } from '../../shared/web-config.ts';
import { demoConfig, isDemo } from './demo.ts';

/** What the service tells the app in its index.html and at /app/config.json (APP_* settings). */
export interface AppConfig {
  readonly client_id: string | null;
  /** `mock` only in the demo (`?demo`), never from the service. */
  readonly environment: 'sandbox' | 'production' | 'mock';
  readonly brand_name: string;
  readonly brand_colour: string;
  readonly stripe_publishable_key: string | null;
  /** A raster tile template for a base map under routes; null: the outline shipped in the app. */
  readonly map_tile_url: string | null;
}

/** The settings from config.json, where the page was served without them. */
export const loadConfig = (): Promise<AppConfig> =>
  loadWebConfig(new URL('config.json', document.baseURI).href) as Promise<AppConfig>;

/** The settings the app runs with: the demo's (`?demo`), or the service's with the linked company. */
export const effectiveConfig = (config: AppConfig): AppConfig =>
  isDemo() ? demoConfig(config) : withLinkedCompany(config);

/** Black or white, whichever reads better on the brand colour (WCAG relative luminance). */
export function textOn(hex: string): string {
  const channel = (i: number): number => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#111111' : '#ffffff';
}

const COMPANY_KEY = 'milepost.company';

/**
 * The company the app signs in to where the service pins none (APP_CLIENT_ID unset and no
 * DEFAULT_CLIENT_ID): the one named by the welcome email's link, `/app/?client_id=…&environment=…`,
 * remembered in this browser for later visits. The link's parameters leave the address bar.
 */
export function withLinkedCompany(config: AppConfig): AppConfig {
  if (config.client_id !== null) return config;
  const query = new URLSearchParams(window.location.search);
  const linked = query.get('client_id');
  if (linked !== null && /^[\w.-]{1,128}$/.test(linked)) {
    const environment = query.get('environment') === 'production' ? 'production' : 'sandbox';
    localStorage.setItem(COMPANY_KEY, JSON.stringify({ client_id: linked, environment }));
    query.delete('client_id');
    query.delete('environment');
    const rest = query.toString();
    window.history.replaceState(null, '', `${window.location.pathname}${rest === '' ? '' : `?${rest}`}`);
  }
  try {
    const kept = JSON.parse(localStorage.getItem(COMPANY_KEY) ?? 'null') as Pick<
      AppConfig,
      'client_id' | 'environment'
    > | null;
    return kept === null ? config : { ...config, client_id: kept.client_id, environment: kept.environment };
  } catch {
    return config;
  }
}
