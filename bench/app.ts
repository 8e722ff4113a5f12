/**
 * The policyholder web app's first render in Chromium (the built app in web/dist/app, signed in, on
 * its policy page) against a bare page on the same server that fetches the same policy and writes its
 * reference, in the same run, in the same browser.
 *
 *   npm run bench -- app [--runs 20]
 *   TEST_DATABASE_URL=postgres://root@127.0.0.1:5432/test npm run bench -- app   # the service on PostgreSQL
 *
 * The service runs in this process as the browser tests run it (test/browser/browser-support.ts): a
 * one-insurer deployment (DEFAULT_CLIENT_ID the company's), a policyholder signed in through the API,
 * the tokens in localStorage as the app keeps them. Debian's Chromium, headless; no browser is
 * downloaded. Each run opens a fresh context (an empty cache: cold) and loads the page, then reloads it
 * in that context (the hashed assets from the cache: warm); app and baseline take turns, in an order
 * that flips every run, so the machine's drift falls on both. Per load: first contentful paint, and the
 * time from navigation start until the policy reference is in the page. The ratio is the baseline's
 * median time to the reference ÷ the app's (1.0: the app adds nothing over a bare fetch and render).
 * Also printed: the app's download, gzipped (index.html with the scripts and styles it names; all assets).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { createMetricsRegistry } from '../src/platform/http/observability.ts';
import { createCompany, createTestApp, signedInPolicyholder } from '../test/support/app.ts';
import { livePolicyInput } from '../test/support/policy-arbitraries.ts';

const CHROMIUM = '/usr/bin/chromium';
const DIST = new URL('../web/dist/app/', import.meta.url);
const SESSION_KEY = 'milepost.session';
const SELECTOR = '[data-testid=policy-reference]';

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: { querySelector(selector: string): { textContent: string | null } | null };
declare const window: { benchShownAt?: number };
declare const localStorage: {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
};
declare const MutationObserver: new (callback: () => void) => {
  observe(target: unknown, options: { childList: boolean; subtree: boolean; characterData: boolean }): void;
  disconnect(): void;
};
interface ResourceEntry {
  readonly initiatorType: string;
  readonly startTime: number;
  readonly transferSize: number;
}

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs must be a whole number ≥ 1 (got ${values.runs})`);
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is not installed (apt-get install chromium)`);
if (!existsSync(new URL('index.html', DIST)))
  throw new Error('the web app is not built: run npm run build:web');

/** index.html's hash: another build during the run would mix two apps' figures. */
const buildHash = () =>
  createHash('sha256')
    .update(readFileSync(new URL('index.html', DIST)))
    .digest('hex');
const builtAtStart = buildHash();

const t = await createTestApp();
const company = await createCompany(t.app, 'Bench Insurer');
const web = await buildApp({
  ...t.container,
  config: Object.freeze({ ...t.container.config, defaultClientId: company.client_id }),
  metrics: createMetricsRegistry(),
});

// The baseline: no framework, no config.json, one module script (as the app's is) that reads the same
// session, asks for the policy with the bearer token and the client_id and environment headers, and
// writes the reference. Cache headers as the app's: the page revalidated, the script cached for ever.
// The app's CSP does not apply to this route.
const BASELINE_HTML = `<!doctype html>
<html lang="en-GB">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:," />
    <title>Baseline</title>
    <script type="module" src="/bench-baseline/baseline.js"></script>
  </head>
  <body>
    <h1>My policy</h1>
    <p data-testid="policy-reference"></p>
  </body>
</html>
`;
const BASELINE_JS = `const session = JSON.parse(localStorage.getItem(${JSON.stringify(SESSION_KEY)}));
const response = await fetch('/policys/details', {
  headers: {
    authorization: 'Bearer ' + session.accessToken,
    client_id: ${JSON.stringify(company.client_id)},
    environment: ${JSON.stringify(t.container.config.app.environment)},
  },
});
const details = await response.json();
document.querySelector(${JSON.stringify(SELECTOR)}).textContent = details.policy_reference;
`;
web.get('/bench-baseline/', { schema: { hide: true } }, async (_request, reply) =>
  reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(BASELINE_HTML),
);
web.get('/bench-baseline/baseline.js', { schema: { hide: true } }, async (_request, reply) =>
  reply
    .header('cache-control', 'public, max-age=31536000, immutable')
    .type('text/javascript; charset=utf-8')
    .send(BASELINE_JS),
);
const baseUrl = await web.listen({ port: 0, host: '127.0.0.1' });
t.container.setListeningUrl(baseUrl);

const email = `bench.app.${String(process.pid)}@example.com`;
const holder = await signedInPolicyholder(
  t,
  company.sandbox,
  email,
  livePolicyInput({ proposer: { email } }),
);
const tokens = JSON.stringify({
  username: holder.username,
  accessToken: holder.accessToken,
  refreshToken: holder.refreshToken,
  expiresAt: holder.expiry,
});

interface Load {
  readonly fcpMs: number;
  readonly shownMs: number;
  /** When the page's code asked for its first data (the app: config.json; the baseline: the policy). */
  readonly firstFetchMs: number;
  /** Scripts and styles that came over the network rather than from the cache. */
  readonly fetchedFiles: number;
}
type Target = 'app' | 'baseline';
type Cache = 'cold' | 'warm';
const URLS: Record<Target, string> = { app: `${baseUrl}/app/`, baseline: `${baseUrl}/bench-baseline/` };

/**
 * The time the reference entered the page, read inside it: a MutationObserver installed before any of
 * the page's scripts runs takes performance.now() (milliseconds since this navigation started) in the
 * microtask right after the DOM change that put the text there. Polling from here (waitForSelector,
 * or waitForFunction's once-a-frame checks) would add a round trip to this process or up to a frame to
 * each figure; this is exact to the change, and leaves out only the paint that follows (one frame at
 * most, for the app and the baseline alike). The first contentful paint is Chromium's own entry.
 */
async function measure(page: Page, go: () => Promise<unknown>): Promise<Load> {
  await go();
  // waitForFunction resolves on a truthy value only: these are numbers.
  const shownMs = Number(await (await page.waitForFunction(() => window.benchShownAt)).jsonValue());
  const fcpMs = Number(
    await (
      await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime)
    ).jsonValue(),
  );
  const resources = await page.evaluate(() =>
    (performance.getEntriesByType('resource') as unknown as ResourceEntry[]).map((entry) => ({
      initiatorType: entry.initiatorType,
      startTime: entry.startTime,
      transferSize: entry.transferSize,
    })),
  );
  const fetches = resources.filter((entry) => entry.initiatorType === 'fetch');
  return {
    fcpMs,
    shownMs,
    firstFetchMs: Math.min(...fetches.map((entry) => entry.startTime)),
    fetchedFiles: resources.filter((entry) => entry.initiatorType !== 'fetch' && entry.transferSize > 0)
      .length,
  };
}

/** A fresh context (empty cache): the page loaded, then reloaded. Console errors go in `problems`. */
async function coldThenWarm(
  browser: Browser,
  which: Target,
  problems: string[],
): Promise<Record<Cache, Load>> {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'en-GB' });
  try {
    await context.addInitScript(
      ({ key, kept, selector, reference }) => {
        // Only once: the app may renew its tokens and keep the new ones.
        if (localStorage.getItem(key) === null) localStorage.setItem(key, kept);
        const observer = new MutationObserver(() => {
          if (document.querySelector(selector)?.textContent?.trim() !== reference) return;
          window.benchShownAt = performance.now();
          observer.disconnect();
        });
        observer.observe(document, { childList: true, subtree: true, characterData: true });
      },
      { key: SESSION_KEY, kept: tokens, selector: SELECTOR, reference: holder.policyReference },
    );
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${which}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${which}: ${error.message}`));
    const cold = await measure(page, () => page.goto(URLS[which]));
    const warm = await measure(page, () => page.reload());
    return { cold, warm };
  } finally {
    await context.close();
  }
}

/** Nearest-rank percentile of milliseconds. */
const percentile = (values: readonly number[], p: number): number => {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/** The gzipped size (level 9) of files under web/dist/app, in bytes. */
const gzipBytes = (paths: readonly string[]): number =>
  paths.reduce((sum, file) => sum + gzipSync(readFileSync(new URL(file, DIST)), { level: 9 }).length, 0);

const loadAverage = () =>
  existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').trim() : 'n/a';
const loadAtStart = loadAverage();
const results: Record<Target, Record<Cache, Load[]>> = {
  app: { cold: [], warm: [] },
  baseline: { cold: [], warm: [] },
};
const problems: string[] = [];
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
});
try {
  // One round each first, not counted: Chromium's first pages, the server's first requests (JIT).
  for (const which of ['app', 'baseline'] as const) await coldThenWarm(browser, which, problems);
  for (let run = 0; run < runs; run++)
    for (const which of run % 2 === 0 ? (['app', 'baseline'] as const) : (['baseline', 'app'] as const)) {
      const { cold, warm } = await coldThenWarm(browser, which, problems);
      results[which].cold.push(cold);
      results[which].warm.push(warm);
    }
} finally {
  await browser.close();
  await web.close();
  await t.close();
}

// Milliseconds from navigation start, median / p90 over the runs.
const cell = (values: readonly number[]) =>
  `${percentile(values, 50).toFixed(0)} / ${percentile(values, 90).toFixed(0)}`.padStart(13);
const medianShownMs = (which: Target, cache: Cache) =>
  percentile(
    results[which][cache].map((l) => l.shownMs),
    50,
  );
const lines: string[] = [
  `app: ${runs} runs; load average ${loadAtStart} at the start, ${loadAverage()} at the end`,
  `${'ms from navigation start, median / p90'.padEnd(41)}${'reference shown'.padStart(18)}${'first paint'.padStart(14)}${'first data request'.padStart(21)}`,
];
for (const cache of ['cold', 'warm'] as const) {
  for (const which of ['app', 'baseline'] as const) {
    const loads = results[which][cache];
    lines.push(
      `${which.padEnd(8)} ${cache}${' '.repeat(28)}${cell(loads.map((l) => l.shownMs)).padStart(18)}${cell(loads.map((l) => l.fcpMs)).padStart(14)}${cell(loads.map((l) => l.firstFetchMs)).padStart(21)}`,
    );
  }
}
for (const cache of ['cold', 'warm'] as const)
  lines.push(
    `app ${cache}: ratio ${(medianShownMs('baseline', cache) / medianShownMs('app', cache)).toFixed(2)} (baseline ÷ app, median time to the reference shown)`,
  );
const warmFetches = results.app.warm.reduce((sum, l) => sum + l.fetchedFiles, 0);
lines.push(
  `app warm: scripts and styles fetched over the network in all warm loads: ${warmFetches} (0: all cached)`,
);

// What a first visit downloads before the policy page can render: index.html and what it names (the
// entry script, its styles, any modulepreload); the lazy chunks (the map, Leaflet, Stripe) come later.
const indexHtml = readFileSync(new URL('index.html', DIST), 'utf8');
const initial = [
  'index.html',
  ...[...indexHtml.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] ?? ''),
];
const assets = readdirSync(new URL('assets/', DIST)).map((file) => `assets/${file}`);
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
lines.push(
  `app download, gzip -9: initial ${kB(gzipBytes(initial))} (${initial.join(', ')}); all ${String(assets.length)} assets ${kB(gzipBytes(assets))}`,
);
if (buildHash() !== builtAtStart) {
  lines.push('web/dist/app was rebuilt during the run: the figures mix two builds; run again');
  process.exitCode = 1;
}
if (problems.length > 0) {
  lines.push(`console errors (${String(problems.length)}):`, ...problems.slice(0, 10).map((p) => `  ${p}`));
  process.exitCode = 1;
}
process.stdout.write(`${lines.join('\n')}\n`);
