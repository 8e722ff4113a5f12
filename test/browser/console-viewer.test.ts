import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertAccessible, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { make } from '../support/factories.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// A viewer reads but does not act: the policy page's action buttons are disabled (with the reason
// beside them), the admin pages are not offered, and an action forced past the page (the page misled
// about the role) is refused by the service with a 403 whose detail the dialog shows. The policy's
// address is shown whole: every line it has, none it lacks.

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'a viewer sees no usable action, and a forced one is refused with a message',
  { skip, timeout: 60_000 },
  async () => {
    const policy = await rig.newPolicy('viewer');
    await rig.changeVehicle(policy.reference, 'LR71 KXT');
    const { context, page, problems } = await rig.signedInStaff('viewer', 'viewer', 1024);
    page.setDefaultTimeout(10_000);

    await page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${policy.reference}`,
    );
    await page.getByRole('heading', { name: `Policy ${policy.reference}`, level: 1 }).waitFor();
    await page.getByTestId('journey').first().waitFor();
    const nav = await page.getByRole('navigation', { name: 'Console pages' }).innerText();
    for (const name of ['Staff', 'Billing runs', 'Companies', 'Products'])
      assert.ok(!nav.includes(name), `a viewer is not offered ${name}`);
    for (const name of ['Grant a credit', 'Resend the welcome email', 'Cancel the policy', 'Void']) {
      const button = page.getByRole('button', { name, exact: true });
      assert.equal(await button.count(), 1, name);
      assert.ok(await button.isDisabled(), `${name} is disabled for a viewer`);
    }
    await page.getByText('Your role can read this policy but not act on it.').waitFor();
    // The whole address, as the policy gives it (the example's three lines and town).
    assert.equal(
      await page.getByTestId('policy-address').innerText(),
      `Flat 3, 12 Station Road, Clerkenwell, London, ${policy.postcode}`,
    );
    // The adjustment's version shows what it changed against the one before.
    const diff = page.getByRole('region', { name: 'What the adjustment changed' });
    assert.match(await diff.innerText(), new RegExp(`Vehicle\\s+${policy.reg}\\s+LR71 KXT`));
    await assertAccessible(page, 'console policy as viewer');
    await shoot(page, 'console-policy-viewer');

    // An admin page by its address says what role it needs instead of showing anything.
    await page.goto(`${rig.baseUrl}/console/staff`);
    await page.getByRole('alert').filter({ hasText: 'This page is for the admin role' }).waitFor();

    // Forced: the page is told the viewer may act (their session, rewritten on its way in), so it offers
    // the action; the service, which knows better, refuses it.
    await page.route('**/staff/session', async (route) => {
      const response = await route.fetch();
      const session = (await response.json()) as { staff: { role: string } };
      await route.fulfill({
        response,
        json: { ...session, staff: { ...session.staff, role: 'operations' } },
      });
    });
    await page.goBack();
    await page.reload();
    await page.getByRole('heading', { name: `Policy ${policy.reference}`, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Grant a credit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Grant a credit' });
    await dialog.getByLabel('Amount in pounds').fill('5');
    await dialog.getByLabel('Reason').fill('Trying my luck');
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith('/admin/credits')),
      dialog.getByRole('button', { name: 'Grant the credit' }).click(),
    ]);
    assert.equal(answer.status(), 403);
    const problem = (await answer.json()) as { code: string; detail: string };
    assert.equal(problem.code, 'FORBIDDEN');
    await dialog.getByRole('alert').filter({ hasText: problem.detail }).waitFor();
    await assertAccessible(page, 'console forbidden');
    await shoot(page, 'console-forbidden');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.match(await page.getByTestId('credit-balance').innerText(), /£0\.00/, 'nothing was granted');

    // An address of one line: no empty parts.
    const { reference: oneLineReference } = await make.livePolicy(rig.t.app, rig.acme, {
      proposer: { email: `one-line.${String(process.pid)}@example.com` },
      policy: { address: { line_2: undefined, line_3: undefined } },
    });
    await page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${oneLineReference}`,
    );
    await page.getByRole('heading', { name: `Policy ${oneLineReference}`, level: 1 }).waitFor();
    assert.equal(await page.getByTestId('policy-address').innerText(), 'Flat 3, London, EC1A 1BB');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);
