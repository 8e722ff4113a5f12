import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  tabTo,
} from './browser-support.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// The Direct Debit pages in Chromium, keyboard only at 360 px and on a desktop: the details with the
// Direct Debit Guarantee in the Bacs scheme's words on the same page, the checks made before anything is
// sent (the sole-authoriser confirmation), the details shown back to confirm or change; and for staff a
// policy's Direct Debit panel and the collections calendar.

// The page's globals the test reads (the root tsconfig has no DOM lib).
declare const document: { activeElement: { getAttribute(name: string): string | null } | null };

interface DirectDebitRead {
  mandates: Array<{ mandate_reference: string | null; status: string; default: boolean }>;
  collections: Array<{ collect_on: string | null; status: string; amount: number }>;
}

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** The policy's Direct Debit as the insurer reads it. */
async function directDebitOf(reference: string): Promise<DirectDebitRead> {
  const r = await rig.t.app.inject({
    url: `/policys/${encodeURIComponent(reference)}/direct-debit`,
    headers: rig.acme.sandbox,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<DirectDebitRead>();
}

/** A journey two days ago and a statement now, which the Direct Debit collects after its notice period. */
async function statementNow(reference: string): Promise<void> {
  const post = (url: string, payload: object) =>
    rig.t.app.inject({ method: 'POST', url, headers: rig.acme.sandbox, payload });
  const startSeconds = Math.floor(Date.now() / 1000) - 2 * 86_400;
  const journey = await post('/journeys', {
    policy_reference: reference,
    route: encodePolyline([51.5074, -0.1278, 52.4862, -1.8904, 53.4808, -2.2426], 5),
    start_time: startSeconds,
    end_time: startSeconds + 4 * 3600,
  });
  assert.equal(journey.statusCode, 201, journey.body);
  const statement = await post('/statements', { policy_reference: reference });
  assert.equal(statement.statusCode, 201, statement.body);
}

/** The details step, typed with the keyboard: the bank fields first (the holder's come from the policy). */
async function typeBankDetails(page: Page, accountNumber: string): Promise<void> {
  // The form opens with the keyboard in the sort code.
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'sortCode');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('10-88-00');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(accountNumber);
}

test(
  'the Direct Debit form: the Guarantee beside it, checked, shown back to confirm or change',
  { skip, timeout: 90_000 },
  async () => {
    const { holder, context, page, problems } = await rig.signedIn('dd-form');
    page.setDefaultTimeout(10_000);
    await page.goto(`${rig.baseUrl}/app/cards`);
    await page.getByRole('heading', { name: 'Payment methods', level: 1 }).waitFor();
    await page.getByText('No Direct Debit set up.').waitFor();
    await assertFits(page, 360);
    await assertAccessible(page, 'payment methods, no direct debit');

    // Keyboard only: to the link, then the form, which opens with the keyboard in the sort code.
    await tabTo(page, 'a[href^="/app/direct-debit"]', 30);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Set up a Direct Debit', level: 1 }).waitFor();
    const guarantee = page.getByTestId('dd-guarantee');
    await guarantee.getByRole('heading', { name: 'The Direct Debit Guarantee' }).waitFor();
    const wording = await guarantee.innerText();
    for (const line of [
      'This Guarantee is offered by all banks and building societies that accept instructions to pay Direct Debits',
      'If there are any changes to the amount, date or frequency of your Direct Debit Milepost will notify you 10 working days in advance of your account being debited or as otherwise agreed.',
      'If an error is made in the payment of your Direct Debit, by Milepost or your bank or building society, you are entitled to a full and immediate refund of the amount paid from your bank or building society',
      'If you receive a refund you are not entitled to, you must pay it back when Milepost asks you to',
      'You can cancel a Direct Debit at any time by simply contacting your bank or building society. Written confirmation may be required. Please also notify us.',
    ])
      assert.ok(wording.includes(line), `the Guarantee says: ${line}`);
    // The holder's name, email and address come from the policy.
    assert.equal(await page.getByLabel('Email').inputValue(), holder.email);
    await assertFits(page, 360);
    await assertAccessible(page, 'direct debit details');
    await shoot(page, 'direct-debit-details');

    // A short account number and no confirmation: told at each field before anything is sent.
    await typeBankDetails(page, '1234567');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Please check the details below.' }).waitFor();
    await page.getByText('Enter the account number: 8 digits.').waitFor();
    await page.getByText('Confirm that you are the account holder').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'accountNumber');
    await assertAccessible(page, 'direct debit details with problems');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('00012345');
    await tabTo(page, 'input[type=checkbox]', 12);
    await page.keyboard.press('Space');
    await tabTo(page, 'form button.primary', 5);
    await page.keyboard.press('Enter');

    // The details shown back, with the Guarantee still on the page; "Change details" keeps what was typed.
    const check = page.getByTestId('dd-check');
    await check.waitFor();
    const shown = await check.innerText();
    assert.match(shown, /Sort code\s*10-88-00/);
    assert.match(shown, /Account number\s*00012345/);
    assert.match(shown, /Collected by\s*Stripe, on behalf of Milepost/);
    await guarantee.waitFor();
    await assertFits(page, 360);
    await assertAccessible(page, 'direct debit check');
    await shoot(page, 'direct-debit-check');
    await tabTo(page, 'button.link-button', 5);
    await page.keyboard.press('Enter');
    await page.getByLabel('Account number').waitFor();
    assert.equal(await page.getByLabel('Account number').inputValue(), '00012345');
    assert.ok(await page.getByRole('checkbox').isChecked(), 'the confirmation is kept');

    await page.setViewportSize({ width: 1280, height: 900 });
    await assertAccessible(page, 'direct debit details on a desktop');
    await shoot(page, 'direct-debit-details-desktop');
    assert.equal((await directDebitOf(holder.reference)).mandates.length, 0, 'nothing was made');
    // Chromium logs each refused request: the card's 404/409 (none on file) is expected; nothing else is.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (404|409)\b/.test(p)),
      [],
      'no console errors',
    );
    await context.close();

    // Staff: the policy page's Direct Debit panel, and the calendar of a month with no collections.
    const staff = await rig.signedInStaff('dd-viewer', 'viewer');
    await staff.page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${encodeURIComponent(holder.reference)}`,
    );
    const panel = staff.page.getByRole('region', { name: 'Direct Debit' });
    await panel.getByText('No Direct Debit mandate.').waitFor();
    await panel.getByText('No Direct Debit collections.').waitFor();
    await assertAccessible(staff.page, 'console policy direct debit');
    await staff.page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link', { name: 'Collections' })
      .click();
    await staff.page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
    await staff.page
      .getByText(/No Direct Debit collections for Acme in sandbox in \w+ \d{4}\./)
      .waitFor()
      .catch(async () => {
        assert.fail(
          `the calendar: ${await staff.page.locator('main').innerText()} ${staff.problems.join(' ')}`,
        );
      });
    const month = await staff.page.getByRole('heading', { level: 2 }).innerText();
    await staff.page.getByRole('button', { name: 'Next month' }).click();
    await staff.page.getByRole('heading', { level: 2 }).filter({ hasNotText: month }).waitFor();
    await staff.page.getByText(/No Direct Debit collections for Acme/).waitFor();
    await assertAccessible(staff.page, 'console collections');
    await staff.page.setViewportSize({ width: 360, height: 740 });
    await assertFits(staff.page, 360);
    await shoot(staff.page, 'console-collections-empty');
    assert.deepEqual(unexpected(staff.problems), []);
    await staff.context.close();
  },
);

test(
  'a Direct Debit set up in the app, refused then accepted, listed, and shown to staff',
  { skip, timeout: 90_000 },
  async () => {
    const { holder, context, page, problems } = await rig.signedIn('dd');
    page.setDefaultTimeout(10_000);
    await page.goto(`${rig.baseUrl}/app/cards`);
    await page.getByRole('heading', { name: 'Payment methods', level: 1 }).waitFor();
    await page.getByText('No Direct Debit set up.').waitFor();

    // Keyboard only: to the link, then the form.
    await tabTo(page, 'a[href^="/app/direct-debit"]', 30);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Set up a Direct Debit', level: 1 }).waitFor();
    const guarantee = page.getByTestId('dd-guarantee');
    await guarantee.getByRole('heading', { name: 'The Direct Debit Guarantee' }).waitFor();
    assert.match(
      await guarantee.innerText(),
      /This Guarantee is offered by all banks and building societies that accept instructions to pay Direct Debits/,
    );
    assert.match(
      await guarantee.innerText(),
      /Direct Debit Milepost will notify you 10 working days in advance of your account being debited/,
    );

    // Nothing ticked: the confirmation of being the sole authoriser is asked for before anything is sent.
    await typeBankDetails(page, '00044444');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Please check the details below.' }).waitFor();
    await page.getByText('Confirm that you are the account holder').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'checkbox');
    await page.keyboard.press('Space');
    await tabTo(page, 'form button.primary', 5);
    await page.keyboard.press('Enter');

    // The details shown back: the bank refuses the account on confirming, and says why.
    const check = page.getByTestId('dd-check');
    await check.waitFor();
    assert.match(await check.innerText(), /Sort code\s*10-88-00/);
    assert.match(await check.innerText(), /Account number\s*00044444/);
    await tabTo(page, 'button.primary', 5);
    await page.keyboard.press('Enter');
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    const refused = await refusal.innerText();
    assert.doesNotMatch(refused, /Please try again later|Something went wrong/, 'the refusal’s own reason');
    assert.equal((await directDebitOf(holder.reference)).mandates.length, 0, 'no mandate recorded');

    // Back to the details (the bank named the account number, or the payer chooses to change it).
    if ((await page.getByTestId('dd-check').count()) > 0) {
      await tabTo(page, 'button.link-button', 5);
      await page.keyboard.press('Enter');
    }
    await page.getByLabel('Account number').waitFor();
    await page.getByLabel('Sort code').focus();
    await typeBankDetails(page, '00012345');
    await tabTo(page, 'form button.primary', 12);
    await page.keyboard.press('Enter');
    await check.waitFor();
    assert.match(await check.innerText(), /Account number\s*00012345/);
    await tabTo(page, 'button.primary', 5);
    await page.keyboard.press('Enter');

    const done = page.getByRole('status').filter({ hasText: 'Your Direct Debit is set up' });
    await done.waitFor({ timeout: 20_000 });
    const read = await directDebitOf(holder.reference);
    assert.equal(read.mandates.length, 1);
    const mandate = read.mandates[0];
    assert.ok(mandate !== undefined && mandate.default, 'the Direct Debit is the default');
    const reference = mandate.mandate_reference;
    assert.ok(reference !== null, 'the mandate has its reference');
    assert.match(await done.innerText(), new RegExp(reference));
    await assertAccessible(page, 'direct debit set up');

    // Listed beside the card, as the default.
    await tabTo(page, 'main a', 5);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Payment methods', level: 1 }).waitFor();
    const listed = page.getByTestId('mandate');
    await listed.filter({ hasText: reference }).waitFor();
    assert.match(await listed.innerText(), /Account ending 2345, sort code 10-88-00/);
    assert.match(await listed.innerText(), /Default/);
    await assertFits(page, 360);
    await assertAccessible(page, 'payment methods with a direct debit');
    await shoot(page, 'payment-methods-direct-debit');
    await page.setViewportSize({ width: 1280, height: 900 });
    await assertAccessible(page, 'payment methods on a desktop');
    await shoot(page, 'payment-methods-direct-debit-desktop');
    // Chromium logs each refused request: the card's 404/409 (none on file) and the sandbox's refusal of
    // the test account are expected; nothing else is.
    assert.deepEqual(
      problems.filter((p) => !/the server responded with a status of (400|402|404|409)\b/.test(p)),
      [],
      'no console errors',
    );
    await context.close();

    // A statement: its collection is scheduled after the notice period.
    await statementNow(holder.reference);
    const collection = (await directDebitOf(holder.reference)).collections[0];
    assert.ok(collection?.collect_on != null, 'a collection is scheduled');
    assert.equal(collection.status, 'scheduled');
    const collectOn = collection.collect_on;

    // Staff: the policy page's Direct Debit panel, then the calendar's day.
    const staff = await rig.signedInStaff('dd-viewer', 'viewer');
    await staff.page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${encodeURIComponent(holder.reference)}`,
    );
    const panel = staff.page.getByRole('region', { name: 'Direct Debit' });
    await panel.getByTestId('mandates').filter({ hasText: reference }).waitFor();
    assert.match(await panel.getByTestId('mandates').innerText(), /active|pending/);
    assert.match(await panel.getByTestId('collections').innerText(), /scheduled/);
    await assertAccessible(staff.page, 'console policy direct debit');
    await shoot(staff.page, 'console-policy-direct-debit');

    await staff.page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link', { name: 'Collections' })
      .click();
    await staff.page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
    const month = new Intl.DateTimeFormat('en-GB', {
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    }).format(new Date(`${collectOn}T00:00:00Z`));
    for (let i = 0; i < 3; i++) {
      if ((await staff.page.getByRole('heading', { name: month, level: 2 }).count()) > 0) break;
      await staff.page.getByRole('button', { name: 'Next month' }).click();
    }
    const day = staff.page.getByTestId('collection-day').filter({ hasText: holder.reference });
    await day.waitFor();
    assert.match(await day.innerText(), /scheduled/);
    assert.match(await day.getByRole('heading').innerText(), new RegExp(String(Number(collectOn.slice(8)))));
    await assertAccessible(staff.page, 'console collections');
    await shoot(staff.page, 'console-collections');
    await staff.page.setViewportSize({ width: 360, height: 740 });
    await assertFits(staff.page, 360);
    assert.deepEqual(unexpected(staff.problems), []);
    await staff.context.close();
  },
);
