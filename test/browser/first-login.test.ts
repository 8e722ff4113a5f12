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
// temporary password → choose a password → My policy. Keyboard only, at 360 px and on a desktop.
declare const localStorage: { getItem(key: string): string | null };

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
