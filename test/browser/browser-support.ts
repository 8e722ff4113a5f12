import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type axe from 'axe-core';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createMetricsRegistry } from '../../src/platform/http/observability.ts';
import { createCompany, createTestApp, signedInPolicyholder, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { make } from '../support/factories.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';

/** Debian's Chromium: playwright-core downloads no browser. */
export const CHROMIUM = '/usr/bin/chromium';
const BUILT = new URL('../../web/dist/app/index.html', import.meta.url);
const SCREENSHOTS = new URL('../../test-artifacts/screenshots/', import.meta.url);
/** axe's minified build: 0.65 MB to send and parse in each page that is checked, against 1.5 MB of `axe.source`. */
const AXE_SOURCE = readFileSync(new URL(import.meta.resolve('axe-core/axe.min.js')), 'utf8');

/**
 * For `test(…, { skip })`: a reason where Chromium is not installed or the suite runs on PostgreSQL,
 * else false. The pages run on the embedded database only: what they show does not depend on which
 * database serves the API, whose routes every other test runs on both, and running them twice cost CI
 * minutes for no failure the PGlite run does not find. `BROWSER_TESTS_ON_POSTGRES=1` runs them there too.
 */
export const skipWithoutChromium: string | false = !existsSync(CHROMIUM)
  ? `${CHROMIUM} is not installed (apt-get install chromium): the browser tests are skipped`
  : onPostgres && process.env['BROWSER_TESTS_ON_POSTGRES'] !== '1'
    ? 'the browser tests run on the embedded database (BROWSER_TESTS_ON_POSTGRES=1 runs them on PostgreSQL too)'
    : false;

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: {
  activeElement: { matches(selector: string): boolean } | null;
  documentElement: { scrollWidth: number };
};
declare const window: { axe: typeof axe };
declare const localStorage: { setItem(key: string, value: string): void };
declare const sessionStorage: {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
};

export interface WebRig {
  readonly t: TestApp;
  readonly acme: Awaited<ReturnType<typeof createCompany>>;
  readonly baseUrl: string;
  readonly browser: Browser;
  /** A policy for a new email (its term covers today), and the welcome email's credentials. */
  newPolicyholder(
    tag: string,
  ): Promise<{ email: string; reference: string; username: string; temporaryPassword: string }>;
  /** The emails sent to an address so far, newest last, as text. */
  emails(email: string): Promise<string[]>;
  /** A 360 px page (or `width`) that records console errors in `problems`. */
  newPage(width?: number): Promise<{ context: BrowserContext; page: Page; problems: string[] }>;
  /**
   * A new policyholder signed in through the API (first login done, password `password`), and a page
   * whose app starts with that session (the tokens in localStorage, as the app keeps them).
   */
  signedIn(
    tag: string,
    width?: number,
  ): Promise<{
    holder: { email: string; reference: string; username: string; password: string };
    context: BrowserContext;
    page: Page;
    problems: string[];
  }>;
  close(): Promise<void>;
}

/**
 * The service with a company, listening on a port and serving the built app as a one-insurer
 * deployment (APP_CLIENT_ID unset, DEFAULT_CLIENT_ID the company's), and Chromium. With
 * `pinCompany: false` no company is pinned: the app learns it from the welcome email's link.
 */
export async function startWebRig(options: { pinCompany?: boolean } = {}): Promise<WebRig> {
  assert.ok(existsSync(BUILT), 'the web app is not built: run npm run build:web (npm ci runs it)');
  const t = await createTestApp();
  const acme = await createCompany(t.app, 'Acme');
  const web: FastifyInstance = await buildApp({
    ...t.container,
    config: Object.freeze({
      ...t.container.config,
      defaultClientId: options.pinCompany === false ? undefined : acme.client_id,
    }),
    metrics: createMetricsRegistry(),
  });
  const baseUrl = await web.listen({ port: 0, host: '127.0.0.1' });
  // Card payments in the sandbox go over this socket through the Stripe SDK.
  t.container.setListeningUrl(baseUrl);
  await mkdir(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-gpu',
    ],
  });
  const emails = async (email: string) =>
    (await t.container.services.notifications.emailsTo(email)).map((e) => e.text ?? '');
  let counter = 0;
  const rig: WebRig = {
    t,
    acme,
    baseUrl,
    browser,
    emails,
    async newPolicyholder(tag) {
      const email = `${tag}.${process.pid}.${++counter}@example.com`;
      return make.policyholder(t, acme, { proposer: { email } }, { live: true });
    },
    async newPage(width = 360) {
      const context = await browser.newContext({ viewport: { width, height: 740 }, locale: 'en-GB' });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      return { context, page, problems };
    },
    async signedIn(tag, width = 360) {
      const email = `${tag}.${String(process.pid)}.${String(++counter)}@example.com`;
      const signed = await signedInPolicyholder(
        t,
        acme.sandbox,
        email,
        livePolicyInput({ proposer: { email } }),
      );
      const holder = { email, reference: signed.policyReference, username: signed.username };
      const opened = await rig.newPage(width);
      const tokens = JSON.stringify({
        username: signed.username,
        accessToken: signed.accessToken,
        refreshToken: signed.refreshToken,
        expiresAt: signed.expiry,
      });
      await opened.context.addInitScript((kept: string) => {
        // Only before the app's first run: a sign-out in the test must stay signed out on reload.
        if (sessionStorage.getItem('rig.seeded') === null) {
          sessionStorage.setItem('rig.seeded', '1');
          localStorage.setItem('milepost.session', kept);
        }
      }, tokens);
      return { holder: { ...holder, password: signed.password }, ...opened };
    },
    async close() {
      try {
        await browser.close();
      } finally {
        await web.close();
        await t.close();
      }
    },
  };
  return rig;
}

/** The value of a `Label: value` line of an email's text. */
export const emailLine = (text: string, label: string): string | undefined =>
  new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(text)?.[1];

/** axe-core on the page as it stands: no serious or critical violation. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  // Injecting axe took 0.2–1 s a check; a page the app changes without a new document keeps it.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(() =>
    window.axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    }),
  );
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${name}: accessibility violations`,
  );
}

/** A full-page screenshot, kept as a test artefact. */
export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
}

/** Tabs from where focus is until `selector` has it (keyboard only, as a person would). */
export async function tabTo(page: Page, selector: string, most = 12): Promise<void> {
  for (let i = 0; i < most; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) === true, selector)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`${selector} was not reached with ${most} presses of Tab`);
}

/** Nothing is wider than the viewport (no sideways scrolling at 360 px). */
export async function assertFits(page: Page, width: number): Promise<void> {
  assert.ok(
    await page.evaluate((w) => document.documentElement.scrollWidth <= w, width),
    `nothing wider than ${width} px`,
  );
}
