import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertAccessible, assertFits, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// An operations user at work in the console: finds a policy by its vehicle and by its postcode, opens
// it, voids a journey and grants a credit (each confirmed in a dialog), sees both in the policy's audit
// trail, then resends the welcome email and cancels the policy: the trail lists all four, each with
// every row it changed.

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: {
  activeElement: { id: string } | null;
  documentElement: { scrollWidth: number };
  querySelector(selector: string): { matches(selector: string): boolean } | null;
};

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'operations: search by registration and postcode, void a journey, grant £5, see the audit rows',
  { skip, timeout: 60_000 },
  async () => {
    const policy = await rig.newPolicy('ops');
    const other = await rig.newPolicy('ops-other');
    const { email, context, page, problems } = await rig.signedInStaff('ops', 'operations');
    page.setDefaultTimeout(10_000);

    await page.goto(`${rig.baseUrl}/console/`);
    await page.getByRole('heading', { name: 'Search policies', level: 1 }).waitFor();
    const nav = await page.getByRole('navigation', { name: 'Console pages' }).innerText();
    assert.ok(!nav.includes('Staff') && !nav.includes('Billing runs'), 'admin pages are not offered');
    // A first load leaves focus at the document's start (readers announce the title): the first Tab
    // reaches the skip link. Only a change of page moves focus to the page (below).
    assert.equal(await page.locator('main:focus').count(), 0, 'the first page does not take focus');
    await page.keyboard.press('Tab');
    assert.equal(await page.locator('a.skip:focus').count(), 1, 'the first Tab reaches the skip link');

    // By registration, typed as a person would (lower case, no space): one row, with its company.
    const box = page.getByLabel('Reference, name, email, registration or postcode');
    await box.fill(policy.reg.toLowerCase().replace(/\s+/g, ''));
    await box.press('Enter');
    const results = page.getByTestId('search-results');
    await results.getByRole('link', { name: policy.reference }).waitFor();
    const text = await results.innerText();
    assert.match(text, /Acme/, 'the company is shown');
    assert.match(text, /sandbox/, 'the environment is shown');
    assert.ok(!text.includes(other.reference), 'only the matching policy');
    assert.match(new URL(page.url()).search, /^\?q=/, 'the search is in the address, for back and links');
    await assertAccessible(page, 'console search');
    await shoot(page, 'console-search');

    // By postcode.
    await box.fill(policy.postcode);
    await box.press('Enter');
    await results.getByRole('link', { name: policy.reference }).waitFor();

    await results.getByRole('link', { name: policy.reference }).click();
    await page.getByRole('heading', { name: `Policy ${policy.reference}`, level: 1 }).waitFor();
    assert.equal(
      new URL(page.url()).pathname,
      `/console/policies/${rig.acme.company_reference}/sandbox/${policy.reference}`,
    );
    // Focus moved to the page, for keyboard and reader users.
    assert.ok(await page.evaluate(() => document.activeElement?.id === 'content'));
    const journey = page.getByTestId('journey');
    await journey.first().waitFor();
    assert.equal(await journey.count(), 1);

    // The journey's route, drawn with the app's map.
    await journey.getByRole('button', { name: /Show route/ }).click();
    await page
      .getByRole('img', { name: `Route from ${policy.journey.start_name} to ${policy.journey.end_name}` })
      .waitFor();
    await assertAccessible(page, 'console policy');
    await shoot(page, 'console-policy');

    // Void, confirmed in a modal dialog that keeps focus.
    await journey.getByRole('button', { name: 'Void' }).click();
    const voidDialog = page.getByRole('dialog', { name: 'Void this journey?' });
    await voidDialog.waitFor();
    assert.ok(
      await page.evaluate(() => document.querySelector('dialog[open]')?.matches(':focus-within') === true),
      'focus is in the dialog',
    );
    await assertAccessible(page, 'console void dialog');
    await shoot(page, 'console-void-dialog');
    await voidDialog.getByLabel('Reason').fill('Driven by someone on another policy');
    await voidDialog.getByRole('button', { name: 'Void the journey' }).click();
    await page.getByRole('status').filter({ hasText: 'is void' }).waitFor();
    await journey.filter({ hasText: 'void: Driven by someone on another policy' }).waitFor();
    assert.equal(
      await journey.getByRole('button', { name: 'Void' }).count(),
      0,
      'a void journey cannot be voided',
    );

    // A £5 credit.
    await page.getByRole('button', { name: 'Grant a credit' }).click();
    const creditDialog = page.getByRole('dialog', { name: 'Grant a credit' });
    await creditDialog.getByLabel('Amount in pounds').fill('5');
    await creditDialog.getByLabel('Reason').fill('Goodwill after a tracker fault');
    await creditDialog.getByRole('button', { name: 'Grant the credit' }).click();
    await page.getByRole('status').filter({ hasText: 'A credit of £5.00 was granted' }).waitFor();
    assert.match(await page.getByTestId('credit-balance').innerText(), /£5\.00/);

    // Both actions in the policy's audit trail, by this user, one group per request.
    const audit = page.getByRole('list', { name: 'Audit records of this policy' });
    await audit.getByTestId('audit-group').filter({ hasText: 'journeys.void' }).waitFor();
    await audit
      .getByTestId('audit-group')
      .filter({ hasText: /credit/i })
      .first()
      .waitFor();
    const groups = await audit.getByTestId('audit-group').allInnerTexts();
    const voidGroup = groups.find((g) => g.includes('journeys.void')) ?? '';
    assert.ok(voidGroup.includes(email), `the void is ${email}'s: ${voidGroup}`);
    assert.match(voidGroup, /\(operations\)/);
    assert.ok(
      groups.some((g) => /credit/i.test(g) && g.includes(email)),
      `the credit is in the trail: ${groups.join(' | ')}`,
    );

    // The welcome email again, and then the policy cancelled: each confirmed, each told.
    await page.getByRole('button', { name: 'Resend the welcome email' }).click();
    await page
      .getByRole('dialog', { name: 'Resend the welcome email?' })
      .getByRole('button', { name: 'Send it' })
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: `The welcome email was sent to ${policy.email}.` })
      .waitFor();
    assert.equal((await rig.emails(policy.email)).length, 2, 'a second welcome email');
    await page.getByRole('button', { name: 'Cancel the policy' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancel this policy?' });
    await cancel.getByLabel('Reason').fill('Sold the car');
    await cancel.getByRole('button', { name: 'Cancel the policy' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Policy ${policy.reference} is cancelled.` })
      .waitFor();
    await page.locator('.lead .status-cancelled').waitFor();
    assert.ok(
      await page.getByRole('button', { name: 'Cancel the policy' }).isDisabled(),
      'a cancelled policy stays so',
    );
    await audit.getByTestId('audit-group').filter({ hasText: 'policies.cancel' }).waitFor();

    // Every record of each action is the policy's, and the panel shows each action with all of its
    // rows: the account and email of the welcome email, the events of each action included.
    const trail = await rig.t.app.inject({
      url: `/admin/audit?actor=${encodeURIComponent(`staff:${email}`)}&limit=500`,
      headers: rig.t.adminHeaders,
    });
    assert.equal(trail.statusCode, 200, trail.body);
    const records = trail
      .json<{ data: Array<{ action: string; table: string | null; policy_reference: string | null }> }>()
      .data.filter((r) => r.action !== 'staff.signIn');
    const actions = ['journeys.void', 'statements.grantCredit', 'policies.resendWelcome', 'policies.cancel'];
    assert.deepEqual([...new Set(records.map((r) => r.action))].sort(), [...actions].sort());
    for (const action of actions) {
      const rows = records.filter((r) => r.action === action && r.table !== null).length;
      const group = audit.getByTestId('audit-group').filter({ hasText: action });
      await group.waitFor();
      assert.equal(await group.count(), 1, action);
      assert.match(
        await group.innerText(),
        new RegExp(`\\b${String(rows)} ${rows === 1 ? 'row' : 'rows'} changed\\b`),
        `${action}: the panel lists its ${String(rows)} rows`,
      );
    }
    assert.deepEqual(
      records
        .filter((r) => r.policy_reference !== policy.reference)
        .map((r) => `${r.action} ${String(r.table)}`),
      [],
      'every record names the policy',
    );

    await assertAccessible(page, 'console policy after actions');
    await page.setViewportSize({ width: 360, height: 740 });
    // The map redraws at its new width once the browser has laid the page out again.
    await page.waitForFunction(() => document.documentElement.scrollWidth <= 360);
    await assertFits(page, 360);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);
