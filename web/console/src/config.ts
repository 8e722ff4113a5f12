import type { Environment } from './api-types.ts';
import { BASE } from './router.ts';

/**
 * What the console reads at /console/config.json (the service's settings; the file is not an API
 * route, so the OpenAPI document does not describe it).
 */
export interface ConsoleConfig {
  readonly brand_name: string;
  readonly environment_default: Environment;
  /** A raster tile template for journey maps; null: the outline shipped in the app. */
  readonly map_tile_url: string | null;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  // From the console's root: a deep page (/console/policies/…) has a base URI of its own.
  const response = await fetch(`${BASE}config.json`, { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  return (await response.json()) as ConsoleConfig;
}
