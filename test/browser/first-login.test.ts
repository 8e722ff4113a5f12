import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  tabTo,
  type WebRig,
} from './browser-support.ts';

// The policyholder web app in Debian's Chromium, as a new policyholder meets it: the welcome email's
// temporary password → choose a password → My policy. Keyboard only, at 360 px and on a desktop. Then the
// pages' tabs on a phone: all in sight, the current one marked, reached by keyboard.
declare const localStorage: { getItem(key: string): string | null };
declare const document: {
  activeElement: { textContent: string | null } | null;
  elementFromPoint(x: number, y: number): { closest(selector: string): unknown } | null;
};

let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'first login from the welcome email to the policy page, keyboard only',
  { skip, timeout: 60_000 },
  async () => {
    const holder = await rig.newPolicyholder('first-login');
    const { context, page, problems } = await rig.newPage(360);

    await page.goto(`${rig.baseUrl}/app/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/app/sign-in');
    await assertAccessible(page, 'sign in');
    await shoot(page, 'sign-in');

    await tabTo(page, 'input[name=username]');
    await page.keyboard.type(holder.username);
    await page.keyboard.press('Tab');
    await page.keyboard.type(holder.temporaryPassword);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Choose a password' }).waitFor();
    await assertAccessible(page, 'choose a password');
    await shoot(page, 'choose-password');
    // A mismatch is told in words before anything is sent.
    await tabTo(page, 'input[name=new_password]');
    await page.keyboard.type('Juniper-Harbour-Lantern-42');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Juniper-Harbour-Lantern-43');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The two passwords do not match.' }).waitFor();
    await page.getByLabel('New password again').fill('');
    await page.getByLabel('New password again').focus();
    await page.keyboard.type('Juniper-Harbour-Lantern-42');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'My policy' }).waitFor();
    await page.getByTestId('policy-reference').filter({ hasText: holder.reference }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/app/policy');
    const text = await page.locator('main').innerText();
    assert.match(text, /Active|Starts soon/);
    assert.match(text, /New policy/, 'the version history');
    assert.match(text, /£\d/, 'money in pounds, en-GB');
    // Coded values in words: the example policy's "comprehensive", "sdp_commuting", "blue" and "petrol".
    assert.match(text, /Cover\s+Comprehensive\n/);
    assert.match(text, /Use\s+Social, domestic and pleasure, with commuting\n/);
    assert.match(text, /Colour\s+Blue\n/);
    assert.match(text, /Fuel\s+Petrol\n/);
    assert.doesNotMatch(text, /comprehensive|sdp_commuting|\bblue\b|\bpetrol\b/);
    await assertFits(page, 360);
    await assertAccessible(page, 'my policy');
    await shoot(page, 'policy-360');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shoot(page, 'policy-desktop');

    // The session survives a reload (kept with the refresh token), and sign-out ends it.
    await page.reload();
    await page.getByTestId('policy-reference').filter({ hasText: holder.reference }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'You have signed out.' }).waitFor();
    await shoot(page, 'signed-out');
    assert.equal(await page.evaluate(() => localStorage.getItem('milepost.session')), null);

    assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)');
    await context.close();
  },
);

test(
  'at 360 px every page’s tab is in sight and the current one marked; Tab reaches each',
  { skip, timeout: 60_000 },
  async () => {
    const { context, page, problems } = await rig.signedIn('tabs', 360);
    const pages = [
      'My policy',
      'Journeys',
      'Driving score',
      'Usage',
      'Statements',
      'Documents',
      'Payment methods',
      'Device',
      'Claims',
    ];
    const nav = page.getByRole('navigation', { name: 'Pages' });
    /** Each tab wholly inside the viewport and the one thing at its centre (not cut off or covered). */
    const assertAllInSight = async (current: string) => {
      const links = nav.getByRole('link');
      assert.deepEqual(await links.allTextContents(), pages);
      for (const name of pages) {
        const link = nav.getByRole('link', { name, exact: true });
        const box = await link.boundingBox();
        assert.ok(box !== null, `${name} is drawn`);
        assert.ok(box.x >= 0 && box.x + box.width <= 360, `${name} within 360 px (${box.x}, ${box.width})`);
        const hit = await page.evaluate(
          ([x, y]) => (document.elementFromPoint(x, y)?.closest('nav a') ?? null) !== null,
          [box.x + box.width / 2, box.y + box.height / 2] as const,
        );
        assert.ok(hit, `${name} is not covered or clipped`);
        assert.equal(await link.getAttribute('aria-current'), name === current ? 'page' : null);
      }
    };

    await page.goto(`${rig.baseUrl}/app/policy`);
    await page.getByRole('heading', { name: 'My policy', level: 1 }).waitFor();
    await assertAllInSight('My policy');
    await assertFits(page, 360);
    await shoot(page, 'tabs-360');

    // Keyboard only: from the top of the page, Tab reaches the tabs in order; Enter on the last opens it.
    await page.locator('body').focus();
    await tabTo(page, 'nav a[href$="/app/policy"]');
    for (const name of pages.slice(1)) {
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent ?? null), name);
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Claims', level: 1 }).waitFor();
    await assertAllInSight('Claims');
    await assertAccessible(page, 'tabs on the claims page');
    await shoot(page, 'tabs-claims-360');

    // Wider, the tabs are one row.
    await page.setViewportSize({ width: 1280, height: 900 });
    const tops = new Set<number>();
    for (const name of pages)
      tops.add((await nav.getByRole('link', { name, exact: true }).boundingBox())?.y ?? -1);
    assert.equal(tops.size, 1, 'one row on a desktop');
    assert.deepEqual(problems, []);
    await context.close();
  },
);
