/**
 * The settings the service put in index.html (`<script type="application/json" id="web-config">`,
 * src/platform/http/web-app.ts), read without a request. A page served without them (a static server
 * of its own, Vite's dev server behind a proxy) asks `<base>config.json`, which answers the same.
 */
const ELEMENT_ID = 'web-config';

/** The settings in the page (as the service wrote them), or undefined where it carries none. */
export function configInPage(): unknown {
  const text = document.getElementById(ELEMENT_ID)?.textContent;
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The settings: the page's, or `configUrl`'s answer. */
export async function loadWebConfig(configUrl: string): Promise<unknown> {
  const inPage = configInPage();
  if (inPage !== undefined) return inPage;
  const response = await fetch(configUrl, { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  return response.json();
}
