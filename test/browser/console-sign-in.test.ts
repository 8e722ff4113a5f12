import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertAccessible, assertFits, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { STAFF_PASSWORD, startConsoleRig, totpCode, unexpected, type ConsoleRig } from './console-support.ts';

// The staff console in Chromium, as a new admin meets it: the one-time password from whoever created
// the account → a password of their own → enrolling an authenticator from the QR code → search; then
// signing out and back in with a code.

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'an admin’s first sign-in: one-time password, new password, TOTP enrolment, then search',
  { skip, timeout: 60_000 },
  async () => {
    const admin = await rig.createStaff('first-admin', 'admin');
    const { context, page, problems } = await rig.newPage(360);
    page.setDefaultTimeout(10_000);

    await page.goto(`${rig.baseUrl}/console/`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    await assertFits(page, 360);
    await assertAccessible(page, 'console sign in');
    await shoot(page, 'console-sign-in');

    // A wrong password is told without saying which part was wrong.
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill('not-the-password-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The email or password is not right.' }).waitFor();

    await page.getByLabel('Password').fill(admin.oneTimePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await assertAccessible(page, 'console new password');
    await shoot(page, 'console-new-password');
    await page.getByLabel('New password', { exact: true }).fill(STAFF_PASSWORD);
    await page.getByLabel('New password again').fill(`${STAFF_PASSWORD}x`);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords do not match.' }).waitFor();
    await page.getByLabel('New password again').fill(STAFF_PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();

    // An admin must enrol an authenticator: a QR code, and the key for typing in by hand.
    await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    assert.ok(
      await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0),
      'the QR code is drawn',
    );
    const secret = (await page.getByTestId('totp-secret').innerText()).trim();
    assert.match(secret, /^[A-Z2-7]{16,}$/, 'a base32 key');
    await assertFits(page, 360);
    await assertAccessible(page, 'console totp enrolment');
    await shoot(page, 'console-totp-enrol');
    await page.getByLabel('Six-digit code').fill('000000');
    await page.getByRole('button', { name: 'Turn on and continue' }).click();
    // The service's own sentence (wrong, expired or used), in the page.
    await page.getByRole('alert').filter({ hasText: /code/i }).waitFor();
    await page.getByLabel('Six-digit code').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Turn on and continue' }).click();

    await page.getByRole('heading', { name: 'Search policies', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/');
    assert.match(await page.getByTestId('signed-in-as').innerText(), new RegExp(`${admin.email}.*admin`));
    const nav = await page.getByRole('navigation', { name: 'Console pages' }).innerText();
    for (const name of ['Search', 'Billing runs', 'Staff', 'Companies', 'Audit', 'My account'])
      assert.ok(nav.includes(name), `an admin sees ${name}`);

    // Signing in again asks for a code (the next step's: the one just used cannot be used twice).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('status').filter({ hasText: 'You have signed out.' }).waitFor();
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(STAFF_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Enter your verification code' }).waitFor();
    await assertAccessible(page, 'console totp');
    await shoot(page, 'console-totp');
    await page.getByLabel('Six-digit code').fill(totpCode(secret, 1));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Search policies', level: 1 }).waitFor();

    // The session is the cookie's: a reload stays signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Search policies', level: 1 }).waitFor();
    assert.deepEqual(unexpected(problems), [], 'no console errors (a CSP violation would show here)');
    await context.close();
  },
);
