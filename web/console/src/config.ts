import { loadWebConfig } from '../../shared/web-config.ts';
import type { Environment } from './api-types.ts';
import { BASE } from './router.ts';

/**
 * What the service tells the console in its index.html and at /console/config.json (the service's
 * settings; the file is not an API route, so the OpenAPI document does not describe it).
 */
export interface ConsoleConfig {
  readonly brand_name: string;
  readonly environment_default: Environment;
  /** A raster tile template for journey maps; null: the outline shipped in the app. */
  readonly map_tile_url: string | null;
}

/** The settings from config.json, where the page was served without them. */
export const loadConfig = (): Promise<ConsoleConfig> =>
  // From the console's root: a deep page (/console/policies/…) has a base URI of its own.
  loadWebConfig(`${BASE}config.json`) as Promise<ConsoleConfig>;
