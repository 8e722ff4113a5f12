import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, assertFits, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { startConsoleRig, totpCode, unexpected, type ConsoleRig } from './console-support.ts';

// Every page of the console as an admin sees it, reached through the navigation: each checked with
// axe-core, fitted to 360 px and kept as a screenshot (console-<page>); with the admin's work on the
// way: a billing run followed live, a product added, a member of staff added (their one-time password
// shown once) and demoted, the audit filtered. Then an operations user turns on two-step verification.

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: {
  activeElement: { id: string } | null;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<{
    tagName: string;
    className: unknown;
    textContent: string | null;
    getBoundingClientRect(): { right: number };
  }>;
};

/** The elements reaching past 360 px, deepest last, for a failure message. */
const widest = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll('main *')]
      .filter((element) => element.getBoundingClientRect().right > 361)
      .slice(-5)
      .map((element) => `${element.tagName} “${(element.textContent ?? '').slice(0, 40)}”`),
  );

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** Opens a page from the navigation, as a click would, and waits for its heading and focus. */
async function open(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await page.waitForFunction(() => document.activeElement?.id === 'content');
  await page
    .getByRole('status')
    .filter({ hasText: /^Loading/ })
    .waitFor({ state: 'detached' });
}

/** axe at the desktop width, then nothing wider than a phone at 360 px, and a screenshot of each. */
async function check(page: Page, name: string): Promise<void> {
  await assertAccessible(page, `console ${name}`);
  await shoot(page, `console-${name}`);
  await page.setViewportSize({ width: 360, height: 740 });
  // A map or chart redraws at its new width once the browser has laid the page out again.
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= 360)
    .catch(async () => {
      assert.fail(`${name}: wider than 360 px: ${(await widest(page)).join(', ')}`);
    });
  await assertFits(page, 360);
  await shoot(page, `console-${name}-360`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test(
  'every page for an admin: accessible, fits 360 px, and does its work',
  { skip, timeout: 90_000 },
  async () => {
    const policy = await rig.newPolicy('pages');
    // A webhook endpoint for the webhooks page.
    const hook = await rig.t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: rig.acme.sandbox,
      payload: { url: 'https://hooks.example.com/milepost', description: 'Acme CRM' },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    const { email, context, page, problems } = await rig.signedInStaff('pages-admin', 'admin');
    page.setDefaultTimeout(10_000);

    await page.goto(`${rig.baseUrl}/console/?q=${encodeURIComponent(policy.reference)}`);
    await page.getByTestId('search-results').getByRole('link', { name: policy.reference }).waitFor();
    await check(page, 'search-results');

    await open(page, 'Failed payments', 'Failed payments');
    assert.match(await page.locator('main').innerText(), /No failed payments for Acme in sandbox/);
    await check(page, 'failed-payments');

    await open(page, 'Webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'https://hooks.example.com/milepost' }).click();
    await page.getByRole('heading', { name: /Deliveries to/ }).waitFor();
    // Events reach endpoints through a job, which does not run here: the list may still be empty.
    await page
      .getByRole('region', { name: 'Deliveries', exact: true })
      .or(page.getByText('No deliveries.'))
      .waitFor();
    await check(page, 'webhooks');

    await open(page, 'Devices offline', 'Devices offline');
    await check(page, 'devices');

    await open(page, 'Billing runs', 'Billing runs');
    await page.getByRole('button', { name: 'Start the run' }).click();
    await page.getByRole('heading', { name: /Billing run for .* finished/ }).waitFor();
    assert.match(await page.getByTestId('run-counts').innerText(), /Due\s+\d+[\s\S]*Failed\s+\d+/);
    await check(page, 'billing-runs');

    await open(page, 'Companies', 'Companies');
    await page.getByRole('region', { name: 'Companies' }).getByText(rig.acme.company_reference).waitFor();
    await check(page, 'companies');

    await open(page, 'Products', 'Products');
    await page.getByRole('button', { name: 'Add a product' }).click();
    const add = page.getByRole('dialog', { name: 'Add a product' });
    await add.getByLabel('Reference').fill('console-test-product');
    await add.getByLabel('Name').fill('Console test product');
    await add.getByLabel('Rules (JSON)').fill('{"daily_cap_distance": 150}');
    await assertAccessible(page, 'console product dialog');
    await add.getByRole('button', { name: 'Add the product' }).click();
    await page.getByRole('status').filter({ hasText: 'Console test product was added.' }).waitFor();
    await page.getByRole('heading', { name: /Console test product/ }).waitFor();
    await check(page, 'products');

    await open(page, 'Staff', 'Staff');
    const newcomer = `newcomer.${process.pid}@staff.example.com`;
    await page.getByLabel('Email').fill(newcomer);
    await page.getByLabel('Role', { exact: true }).selectOption('operations');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const otp = page.getByTestId('one-time-password');
    await otp.waitFor();
    assert.ok((await otp.innerText()).length >= 12, 'a one-time password is shown once');
    await page.getByLabel(`Role of ${newcomer}`).selectOption('viewer');
    const demote = page.getByRole('dialog', { name: `Make ${newcomer} viewer?` });
    await demote.getByRole('button', { name: 'Change the role' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${newcomer} is now viewer.` })
      .waitFor();
    await check(page, 'staff');

    await open(page, 'Audit', 'Audit');
    await page.getByLabel('Staff email (or admin-key)').fill(email);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByTestId('audit-group').filter({ hasText: 'staff.update' }).waitFor();
    const actions = await page.locator('.audit-action').allInnerTexts();
    assert.ok(actions.includes('staff.create') && actions.includes('products.create'), actions.join(', '));
    await check(page, 'audit');

    await open(page, 'My account', 'My account');
    await check(page, 'account');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);

test(
  'an operations user turns on two-step verification from My account',
  { skip, timeout: 60_000 },
  async () => {
    const { context, page, problems } = await rig.signedInStaff('pages-ops', 'operations');
    page.setDefaultTimeout(10_000);
    await page.goto(`${rig.baseUrl}/console/account`);
    await page.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    const secret = (await page.getByTestId('totp-secret').innerText()).trim();
    await assertAccessible(page, 'console account enrolment');
    await shoot(page, 'console-account-enrol');
    await page.getByLabel('Six-digit code').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Turn it on' }).click();
    await page.getByRole('status').filter({ hasText: 'Two-step verification is on.' }).waitFor();

    // Signing out everywhere ends this session too: the console goes back to signing in.
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('status').filter({ hasText: 'You have signed out on every device.' }).waitFor();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);
