/**
 * The web apps' first render in Chromium, each against a bare page on the same server that fetches the
 * same data and writes it, in the same run, in the same browser: the policyholder app (web/dist/app,
 * signed in, on its policy page: the policy reference, from `/policys/details`) and the staff console
 * (web/dist/console, a viewer signed in, on its first page, search: who is signed in, from
 * `/staff/session`).
 *
 *   npm run bench -- app [--runs 20]
 *   TEST_DATABASE_URL=postgres://root@127.0.0.1:5432/test npm run bench -- app   # the service on PostgreSQL
 *
 * The service runs in this process as the browser tests run it (test/browser/browser-support.ts): a
 * one-insurer deployment (DEFAULT_CLIENT_ID the company's), a policyholder signed in through the API,
 * the tokens in localStorage as the app keeps them; a staff member signed in through the API, the
 * session cookie in the browser as the console's sign-in leaves it. Debian's Chromium, headless; no browser is
 * downloaded. Each run opens a fresh context (an empty cache: cold) and loads the page, then reloads it
 * in that context (the hashed assets from the cache: warm); app and baseline take turns, in an order
 * that flips every run, so the machine's drift falls on both. Per load, from navigation start: first
 * contentful paint, and when the awaited text entered the page and was painted. The ratio is the
 * baseline's median time to the text painted ÷ the app's (1.0: the app adds nothing over a bare fetch
 * and render).
 * Also printed: each app's download, gzipped (index.html with the scripts and styles it names; all assets).
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
const APPS = ['app', 'console'] as const;
type AppName = (typeof APPS)[number];
const distOf = (name: AppName) => new URL(`../web/dist/${name}/`, import.meta.url);
const SESSION_KEY = 'milepost.session';
/** Where each app (and its baseline) shows the text awaited. */
const SELECTORS: Record<AppName, string> = {
  app: '[data-testid=policy-reference]',
  console: '[data-testid=signed-in-as]',
};

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: {
  querySelector(
    selector: string,
  ): { textContent: string | null; setAttribute(name: string, value: string): void } | null;
};
declare const window: { benchShown(insertedMs: number, paintedMs: number): Promise<void> };
declare const PerformanceObserver: new (callback: (list: { getEntries(): PaintedElement[] }) => void) => {
  observe(options: { type: 'element'; buffered: boolean }): void;
};
/** An Element Timing entry: when an element marked `elementtiming` was first painted (presented). */
interface PaintedElement {
  readonly identifier: string;
  readonly renderTime: number;
}
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
if (APPS.some((name) => !existsSync(new URL('index.html', distOf(name)))))
  throw new Error('the web apps are not built: run npm run build:web');

/** The index.html files' hash: another build during the run would mix two builds' figures. */
const buildHash = () => {
  const hash = createHash('sha256');
  for (const name of APPS) hash.update(readFileSync(new URL('index.html', distOf(name))));
  return hash.digest('hex');
};
const builtAtStart = buildHash();

const t = await createTestApp();
const company = await createCompany(t.app, 'Bench Insurer');
const web = await buildApp({
  ...t.container,
  config: Object.freeze({ ...t.container.config, defaultClientId: company.client_id }),
  metrics: createMetricsRegistry(),
});

// The baselines: no framework, no settings, one module script each (as the apps' entries are) that
// asks for the same data as the app does first and writes it. The app's: reads the same session, asks
// for the policy with the bearer token and the client_id and environment headers, writes the
// reference. The console's: asks for the staff session (the cookie goes by itself), writes the email.
// Cache headers as the apps': the page revalidated, the script cached for ever. The apps' CSP does not
// apply to these routes.
const baselineHtml = (name: AppName) => `<!doctype html>
<html lang="en-GB">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:," />
    <title>Baseline</title>
    <script type="module" src="/bench-baseline/${name}/baseline.js"></script>
  </head>
  <body>
    <h1>${name === 'app' ? 'My policy' : 'Search policies'}</h1>
    <p data-testid="${name === 'app' ? 'policy-reference' : 'signed-in-as'}"></p>
  </body>
</html>
`;
const BASELINE_JS: Record<AppName, string> = {
  app: `const session = JSON.parse(localStorage.getItem(${JSON.stringify(SESSION_KEY)}));
const response = await fetch('/policys/details', {
  headers: {
    authorization: 'Bearer ' + session.accessToken,
    client_id: ${JSON.stringify(company.client_id)},
    environment: ${JSON.stringify(t.container.config.app.environment)},
  },
});
const details = await response.json();
document.querySelector(${JSON.stringify(SELECTORS.app)}).textContent = details.policy_reference;
`,
  console: `const response = await fetch('/staff/session', { headers: { accept: 'application/json' } });
const session = await response.json();
document.querySelector(${JSON.stringify(SELECTORS.console)}).textContent = session.staff.email + ' (' + session.staff.role + ')';
`,
};
for (const name of APPS) {
  web.get(`/bench-baseline/${name}/`, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(baselineHtml(name)),
  );
  web.get(`/bench-baseline/${name}/baseline.js`, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type('text/javascript; charset=utf-8')
      .send(BASELINE_JS[name]),
  );
}
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

/** A viewer signed in as the console signs in (one-time password, then a new one): the session cookie. */
async function signedInStaffCookie(): Promise<{ cookie: string; shown: string }> {
  const staffEmail = `bench.console.${String(process.pid)}@staff.example.com`;
  const created = await t.app.inject({
    method: 'POST',
    url: '/admin/staff',
    headers: t.adminHeaders,
    payload: { email: staffEmail, role: 'viewer' },
  });
  if (created.statusCode !== 201) throw new Error(`staff not created: ${created.body}`);
  const { one_time_password: oneTimePassword } = created.json<{ one_time_password: string }>();
  const first = await t.app.inject({
    method: 'POST',
    url: '/staff/session',
    payload: { email: staffEmail, password: oneTimePassword },
  });
  const cookie = first.cookies.find((c) => c.name === 'milepost_staff')?.value;
  if (first.statusCode !== 200 || cookie === undefined) throw new Error(`no staff session: ${first.body}`);
  const active = await t.app.inject({
    method: 'POST',
    url: '/staff/session/password',
    headers: { 'x-csrf-token': first.json<{ csrf_token: string }>().csrf_token },
    cookies: { milepost_staff: cookie },
    payload: { new_password: 'Quarry-Lantern-Orchard-731' },
  });
  if (active.json<{ stage: string }>().stage !== 'active') throw new Error(`not signed in: ${active.body}`);
  const renewed = active.cookies.find((c) => c.name === 'milepost_staff')?.value ?? cookie;
  return { cookie: renewed, shown: `${staffEmail} (viewer)` };
}
const staff = await signedInStaffCookie();

interface Load {
  readonly fcpMs: number;
  /** When the awaited text was painted: the figure compared. */
  readonly shownMs: number;
  /** When it entered the DOM (the paint follows; how long after is the renderer's work on the frame). */
  readonly insertedMs: number;
  /** When the page's code asked for its first data (before: the apps' config.json). */
  readonly firstFetchMs: number;
  /** Scripts and styles that came over the network rather than from the cache. */
  readonly fetchedFiles: number;
}
type Target = 'app' | 'baseline';
type Cache = 'cold' | 'warm';
const urlOf = (name: AppName, which: Target) =>
  which === 'app' ? `${baseUrl}/${name}/` : `${baseUrl}/bench-baseline/${name}/`;
/** The text awaited: the policy reference; who is signed in (the console writes `email (role)`). */
const AWAITED: Record<AppName, string> = { app: holder.policyReference, console: staff.shown };

/**
 * The times the awaited text entered the page and was painted, read inside it: a MutationObserver
 * installed before any of the page's scripts runs takes performance.now() (milliseconds since this
 * navigation started) in the microtask right after the DOM change that put the text there and marks
 * the element for Element Timing, whose entry gives the time the frame holding the text was presented
 * (as first-contentful-paint's does); both go to this process through a binding (`shown`). The paint is
 * what is compared: the renderer's work between the two (a first layout of text in a new renderer took
 * 85 ms in a traced cold load) is the user's wait too, and differs between the app and the baseline.
 * Polling from here (waitForSelector, or waitForFunction's once-a-frame checks) would add a round trip
 * to this process or up to a frame to each figure, and Playwright's injected script, evaluated in the
 * page when a wait first needs it (20–30 ms of the page's main thread on the 2-core machine), would land
 * inside the time measured; nothing of this process's runs in the page until the text is painted.
 */
async function measure(
  page: Page,
  shown: Promise<{ insertedMs: number; paintedMs: number }>,
  go: () => Promise<unknown>,
): Promise<Load> {
  await go();
  let timer: NodeJS.Timeout | undefined;
  const { insertedMs, paintedMs: shownMs } = await Promise.race([
    shown,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new Error('the awaited text was not painted within 30 s'));
      }, 30_000);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });
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
    insertedMs,
    firstFetchMs: Math.min(...fetches.map((entry) => entry.startTime)),
    fetchedFiles: resources.filter((entry) => entry.initiatorType !== 'fetch' && entry.transferSize > 0)
      .length,
  };
}

/** A fresh context (empty cache): the page loaded, then reloaded. Console errors go in `problems`. */
async function coldThenWarm(
  browser: Browser,
  name: AppName,
  which: Target,
  problems: string[],
): Promise<Record<Cache, Load>> {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'en-GB' });
  try {
    if (name === 'console')
      await context.addCookies([{ name: 'milepost_staff', value: staff.cookie, url: baseUrl }]);
    // Each load's time to the text, as the page reports it (one load at a time in a context).
    let shown: PromiseWithResolvers<{ insertedMs: number; paintedMs: number }> | undefined;
    await context.exposeBinding('benchShown', (_source, insertedMs: number, paintedMs: number) => {
      shown?.resolve({ insertedMs, paintedMs });
    });
    const next = () => {
      shown = Promise.withResolvers();
      return shown.promise;
    };
    await context.addInitScript(
      ({ key, kept, selector, awaited }) => {
        // Only once: the app may renew its tokens and keep the new ones.
        if (localStorage.getItem(key) === null) localStorage.setItem(key, kept);
        let insertedMs = Number.NaN;
        const observer = new MutationObserver(() => {
          const element = document.querySelector(selector);
          if (element?.textContent?.trim() !== awaited) return;
          insertedMs = performance.now();
          element.setAttribute('elementtiming', 'bench-awaited');
          observer.disconnect();
        });
        observer.observe(document, { childList: true, subtree: true, characterData: true });
        new PerformanceObserver((list) => {
          const painted = list.getEntries().find((entry) => entry.identifier === 'bench-awaited');
          if (painted !== undefined) void window.benchShown(insertedMs, painted.renderTime);
        }).observe({ type: 'element', buffered: true });
      },
      { key: SESSION_KEY, kept: tokens, selector: SELECTORS[name], awaited: AWAITED[name] },
    );
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${name} ${which}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${name} ${which}: ${error.message}`));
    const cold = await measure(page, next(), () => page.goto(urlOf(name, which)));
    const warm = await measure(page, next(), () => page.reload());
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

/** The gzipped size (level 9) of files under web/dist/<name>, in bytes. */
const gzipBytes = (name: AppName, paths: readonly string[]): number =>
  paths.reduce(
    (sum, file) => sum + gzipSync(readFileSync(new URL(file, distOf(name))), { level: 9 }).length,
    0,
  );

const loadAverage = () =>
  existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').trim() : 'n/a';
const loadAtStart = loadAverage();
const emptyResults = (): Record<Target, Record<Cache, Load[]>> => ({
  app: { cold: [], warm: [] },
  baseline: { cold: [], warm: [] },
});
const results: Record<AppName, Record<Target, Record<Cache, Load[]>>> = {
  app: emptyResults(),
  console: emptyResults(),
};
const problems: string[] = [];
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
});
try {
  // One round each first, not counted: Chromium's first pages, the server's first requests (JIT).
  for (const name of APPS)
    for (const which of ['app', 'baseline'] as const) await coldThenWarm(browser, name, which, problems);
  for (let run = 0; run < runs; run++)
    for (const name of APPS)
      for (const which of run % 2 === 0 ? (['app', 'baseline'] as const) : (['baseline', 'app'] as const)) {
        const { cold, warm } = await coldThenWarm(browser, name, which, problems);
        results[name][which].cold.push(cold);
        results[name][which].warm.push(warm);
      }
} finally {
  await browser.close();
  await web.close();
  await t.close();
}

// Milliseconds from navigation start, median / p90 over the runs.
const cell = (values: readonly number[]) =>
  `${percentile(values, 50).toFixed(0)} / ${percentile(values, 90).toFixed(0)}`.padStart(13);
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const lines: string[] = [
  `app: ${runs} runs; load average ${loadAtStart} at the start, ${loadAverage()} at the end`,
];
for (const name of APPS) {
  const medianShownMs = (which: Target, cache: Cache) =>
    percentile(
      results[name][which][cache].map((l) => l.shownMs),
      50,
    );
  lines.push(
    `${`${name}: ms from navigation start, median / p90`.padEnd(49)}${'painted'.padStart(10)}${'in the DOM'.padStart(14)}${'first paint'.padStart(14)}${'first data request'.padStart(21)}`,
  );
  for (const cache of ['cold', 'warm'] as const)
    for (const which of ['app', 'baseline'] as const) {
      const loads = results[name][which][cache];
      lines.push(
        `${(which === 'app' ? name : `${name} baseline`).padEnd(17)} ${cache}${' '.repeat(27)}${cell(loads.map((l) => l.shownMs)).padStart(18)}${cell(loads.map((l) => l.insertedMs)).padStart(14)}${cell(loads.map((l) => l.fcpMs)).padStart(14)}${cell(loads.map((l) => l.firstFetchMs)).padStart(21)}`,
      );
    }
  for (const cache of ['cold', 'warm'] as const)
    lines.push(
      `${name} ${cache}: ratio ${(medianShownMs('baseline', cache) / medianShownMs('app', cache)).toFixed(2)} (baseline ÷ ${name}, median time to the text painted)`,
    );
  const warmFetches = results[name].app.warm.reduce((sum, l) => sum + l.fetchedFiles, 0);
  lines.push(
    `${name} warm: scripts and styles fetched over the network in all warm loads: ${warmFetches} (0: all cached)`,
  );
  // What a first visit downloads before the first page can render: index.html (with the styles and the
  // start script inline) and what it names (the entry script, any modulepreloaded chunk); not a
  // disabled stylesheet link, which is not fetched; the other pages' chunks come later.
  const indexHtml = readFileSync(new URL('index.html', distOf(name)), 'utf8');
  const initial = [
    'index.html',
    ...[...indexHtml.matchAll(/<(?:script|link)\b[^>]*>/g)]
      .filter(([tag]) => !/\sdisabled\b/.test(tag))
      .map(([tag]) => new RegExp(`(?:src|href)="/${name}/(assets/[^"]+\\.(?:js|css))"`).exec(tag)?.[1])
      .filter((file) => file !== undefined),
  ];
  const assets = readdirSync(new URL('assets/', distOf(name)))
    .filter((file) => !/\.(?:br|gz)$/.test(file))
    .map((file) => `assets/${file}`);
  lines.push(
    `${name} download, gzip -9: initial ${kB(gzipBytes(name, initial))} (${initial.join(', ')}); all ${String(assets.length)} assets ${kB(gzipBytes(name, assets))}`,
  );
}
if (buildHash() !== builtAtStart) {
  lines.push('web/dist was rebuilt during the run: the figures mix two builds; run again');
  process.exitCode = 1;
}
if (problems.length > 0) {
  lines.push(`console errors (${String(problems.length)}):`, ...problems.slice(0, 10).map((p) => `  ${p}`));
  process.exitCode = 1;
}
process.stdout.write(`${lines.join('\n')}\n`);
