/** What the service tells the app at /app/config.json (APP_* settings). */
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

export async function loadConfig(): Promise<AppConfig> {
  const response = await fetch(new URL('config.json', document.baseURI), { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  return (await response.json()) as AppConfig;
}

/** Black or white, whichever reads better on the brand colour (WCAG relative luminance). */
export function textOn(hex: string): string {
  const channel = (i: number): number => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#111111' : '#ffffff';
}
