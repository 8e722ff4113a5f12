import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertAccessible,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  type WebRig,
} from './browser-support.ts';

// `/app/?demo`: the app against the mock environment, signed in by itself, every page answered with the
// demo policy's data, `?demo` kept on every page, and its session apart from a real one.
declare const localStorage: { getItem(key: string): string | null };

let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** What each page shows of the demo account, beyond its heading. */
const PAGES: ReadonlyArray<{ name: string; shows: RegExp[] }> = [
  {
    name: 'Journeys',
    shows: [/City of London\s*→\s*to\s*Canary Wharf/, /Void — not charged/, /Estimated — device offline/],
  },
  { name: 'Driving score', shows: [/The demo has no driving scores/] },
  { name: 'Usage', shows: [/Your budget is 400 miles a month/] },
  {
    name: 'Statements',
    shows: [
      /Payment failed/,
      /Update card and pay now/,
      /Daily cap credit/,
      /Goodwill credit/,
      /Paid £\d+\.\d\d/,
    ],
  },
  { name: 'Payment methods', shows: [/Visa •••• 4242/] },
  { name: 'Device', shows: [/Online/, /obd-356938035643809/] },
];

test(
  'the demo signs in by itself and shows every page with sample data',
  { skip, timeout: 60_000 },
  async () => {
    const { context, page, problems } = await rig.newPage(360);
    await page.goto(`${rig.baseUrl}/app/?demo`);

    await page.getByRole('heading', { name: 'My policy', level: 1 }).waitFor();
    await page.getByTestId('policy-reference').filter({ hasText: 'amber-falcon-river' }).waitFor();
    const banner = page.getByText('Demo — sample data, nothing is saved.');
    await banner.waitFor();
    assert.equal(new URL(page.url()).search, '?demo');
    assert.ok((await page.evaluate(() => localStorage.getItem('milepost.demo-session'))) !== null);
    assert.equal(
      await page.evaluate(() => localStorage.getItem('milepost.session')),
      null,
      'the real session untouched',
    );
    await assertAccessible(page, 'demo policy');
    await shoot(page, 'demo');

    const nav = page.getByRole('navigation', { name: 'Pages' });
    for (const { name, shows } of PAGES) {
      await nav.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      assert.equal(new URL(page.url()).search, '?demo', `${name} keeps ?demo`);
      const main = page.locator('main');
      for (const shown of shows)
        await main
          .filter({ hasText: shown })
          .waitFor({ timeout: 10_000 })
          .catch(async () => {
            assert.fail(`${name} shows ${String(shown)}: ${await main.innerText()}`);
          });
      assert.equal(await page.getByRole('alert').count(), 0, `${name} shows no error`);
    }
    // Signed out, the demo takes any username and password, and stays the demo.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Sign in with any username and password.').waitFor();
    await page.locator('input[name=username]').fill('anyone');
    await page.locator('input[name=password]').fill('anything');
    await page.keyboard.press('Enter');
    await page.getByTestId('policy-reference').filter({ hasText: 'amber-falcon-river' }).waitFor();
    assert.equal(new URL(page.url()).search, '?demo');

    // Leaving the demo opens the real app, which is not signed in; the demo's session stays its own.
    await page.getByRole('link', { name: 'Leave the demo' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).search, '');
    assert.equal(await banner.count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  },
);
