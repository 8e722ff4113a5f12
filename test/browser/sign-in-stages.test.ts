import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertAccessible,
  emailLine,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  type WebRig,
} from './browser-support.ts';

// The other stages of the sign-in page: forgot password → code → new password; an expired temporary
// password → RESEND_PASSWORD → the new one; throttling shown with the wait.
let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'forgot password → the code from the email → a new password, signed in',
  { skip, timeout: 60_000 },
  async () => {
    const holder = await rig.newPolicyholder('forgot');
    const { context, page, problems } = await rig.newPage();
    await page.goto(`${rig.baseUrl}/app/sign-in`);
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('Username or email').fill(holder.email);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Enter the code and a new password' }).waitFor();
    await assertAccessible(page, 'reset password');
    await shoot(page, 'reset-password');
    const code = (await rig.emails(holder.email)).map((text) => emailLine(text, 'Code')).find(Boolean);
    assert.match(code ?? '', /^\d{6}$/, 'the reset email has the code');
    await page.getByLabel('Code from the email').fill(code!);
    await page.getByLabel('New password', { exact: true }).fill('Quartz-Meadow-Falcon-19');
    await page.getByLabel('New password again').fill('Quartz-Meadow-Falcon-19');
    await page.keyboard.press('Enter');
    await page.getByTestId('policy-reference').filter({ hasText: holder.reference }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  },
);

test(
  'an expired temporary password: a new one by email, then the first login',
  { skip, timeout: 60_000 },
  async () => {
    const holder = await rig.newPolicyholder('expired');
    await rig.t.container.database.db
      .updateTable('users')
      .set({ temporary_password_expires_at: new Date(Date.now() - 60_000) })
      .where('email', '=', holder.email)
      .execute();
    const { context, page } = await rig.newPage();
    await page.goto(`${rig.baseUrl}/app/sign-in`);
    await page.getByLabel('Username or email').fill(holder.username);
    await page.getByLabel('Password').fill(holder.temporaryPassword);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your temporary password has expired' }).waitFor();
    await assertAccessible(page, 'temporary password expired');
    await shoot(page, 'temporary-password-expired');
    await page.getByRole('button', { name: 'Email me a new temporary password' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'We have emailed you a new temporary password' })
      .waitFor();
    const sent = await rig.emails(holder.email);
    const fresh = sent
      .map((text) => emailLine(text, 'Temporary password'))
      .filter(Boolean)
      .at(-1);
    assert.ok(
      fresh !== undefined && fresh !== holder.temporaryPassword,
      'a new temporary password was emailed',
    );
    await page.getByLabel('Username or email').fill(holder.username);
    await page.getByLabel('Password').fill(fresh);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Choose a password' }).waitFor();
    await context.close();
  },
);

test('throttled sign-in attempts answer with the wait, in words', { skip, timeout: 60_000 }, async () => {
  const holder = await rig.newPolicyholder('throttled');
  const { context, page } = await rig.newPage();
  await page.goto(`${rig.baseUrl}/app/sign-in`);
  await page.getByLabel('Username or email').fill(holder.username);
  const alert = page.getByRole('alert');
  let text = '';
  // After 5 failures an account waits (1 s, doubling): the next attempts within it answer 429.
  for (let attempt = 0; attempt < 12 && !/Too many attempts/.test(text); attempt++) {
    await page.getByLabel('Password').fill(`wrong-password-${attempt}`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alert.waitFor();
    await page
      .getByRole('button', { name: 'Sign in', exact: true })
      .and(page.locator(':not([disabled])'))
      .or(alert.filter({ hasText: 'Too many attempts' }))
      .first()
      .waitFor();
    text = await alert.innerText();
  }
  assert.match(text, /^Too many attempts\. Please wait \d+ seconds?( \d+ seconds?)? and try again\./);
  assert.doesNotMatch(text, /[{}]|RATE_LIMITED|429/, 'a sentence, not a body or a code');
  await shoot(page, 'sign-in-throttled');
  await context.close();
});
