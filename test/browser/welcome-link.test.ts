import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  emailLine,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  type WebRig,
} from './browser-support.ts';

// A deployment that pins no company (no APP_CLIENT_ID, no DEFAULT_CLIENT_ID: the embedded defaults of
// `npm start`): the welcome email's link names the company, and the app signs in to it from then on.
let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig({ pinCompany: false });
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'the welcome email’s link leads to a first login with no company pinned',
  { skip, timeout: 90_000 },
  async () => {
    const holder = await rig.newPolicyholder('welcome-link');
    const [welcome = ''] = await rig.emails(holder.email);
    const link = emailLine(welcome, 'Sign in at');
    assert.ok(link !== undefined, 'the welcome email has the app’s address');
    const url = new URL(link);
    assert.equal(url.origin, rig.baseUrl, 'the service’s own address');
    assert.equal(url.pathname, '/app/');
    assert.equal(url.searchParams.get('client_id'), rig.acme.client_id);
    assert.equal(url.searchParams.get('environment'), 'sandbox');

    // Without the link the app cannot know the company: the login is refused in words.
    const { context, page, problems } = await rig.newPage();
    await page.goto(`${rig.baseUrl}/app/`);
    await page.getByLabel('Username or email').fill(holder.username);
    await page.getByLabel('Password', { exact: true }).fill(holder.temporaryPassword);
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    assert.doesNotMatch(await page.getByRole('alert').innerText(), /[{}]|client_id/);

    await page.goto(link);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(new URL(page.url()).search, '', 'the link’s parameters leave the address bar');
    await page.getByLabel('Username or email').fill(holder.username);
    await page.getByLabel('Password', { exact: true }).fill(holder.temporaryPassword);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Choose a password' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('Quartz-Meadow-Falcon-19');
    await page.getByLabel('New password again').fill('Quartz-Meadow-Falcon-19');
    await page.keyboard.press('Enter');
    await page.getByTestId('policy-reference').filter({ hasText: holder.reference }).waitFor();
    // Later visits, without the link, still know the company.
    await page.goto(`${rig.baseUrl}/app/journeys`);
    await page.getByRole('heading', { name: 'Journeys' }).waitFor();
    await shoot(page, 'welcome-link-journeys');
    // The one refused login above is the only error the browser logged (Chromium logs refused requests).
    assert.ok(problems.length <= 1 && problems.every((p) => /401/.test(p)), problems.join('\n'));
    await context.close();
  },
);
