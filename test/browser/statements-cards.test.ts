import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  tabTo,
  type WebRig,
} from './browser-support.ts';

// A statement whose card payment failed, fixed by the policyholder in Chromium: the decline's reason,
// "Update card and pay now" with a test card typed into the sandbox's card form, then paid; the Cards
// page shows the new card, and takes another. Keyboard only at 360 px, then on a desktop.

// The page's globals the test reads (the root tsconfig has no DOM lib).
declare const document: { activeElement: { getAttribute(name: string): string | null } | null };

interface Payment {
  purpose: string;
  status: string;
  amount: number;
  policy_version_reference: string | null;
}

let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** The policy's payment records, as the insurer reads them. */
async function paymentsOf(reference: string): Promise<Payment[]> {
  const r = await rig.t.app.inject({
    url: `/payments?policy_reference=${encodeURIComponent(reference)}`,
    headers: rig.acme.sandbox,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ payments: Payment[] }>().payments;
}

async function waitForPayments(reference: string, ready: (list: Payment[]) => boolean): Promise<Payment[]> {
  for (let i = 0; i < 100; i++) {
    const list = await paymentsOf(reference);
    if (ready(list)) return list;
    await sleep(100);
  }
  assert.fail('the payment records did not reach the expected state');
}

/** A card that declines for insufficient funds, a long journey, and a statement whose charge fails. */
async function failedStatement(reference: string): Promise<{ version: string; billed: number }> {
  const post = (url: string, payload: object) =>
    rig.t.app.inject({ method: 'POST', url, headers: rig.acme.sandbox, payload });
  const card = await post('/payments', {
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: reference,
    product_reference: 'pay-by-mile-car',
    payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds',
  });
  assert.equal(card.statusCode, 200, card.body);
  // London to Manchester two days ago: well over the 30p minimum charge.
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
  const body = statement.json<{
    policy_version_reference: string;
    billed_premium: number;
    payment?: { payment_amount: number | null };
  }>();
  assert.equal(body.payment?.payment_amount, null, 'the charge was declined');
  await waitForPayments(reference, (list) =>
    list.some((p) => p.purpose === 'statement' && p.status === 'failed'),
  );
  return { version: body.policy_version_reference, billed: body.billed_premium };
}

test('a failed statement payment fixed by adding a card and paying', { skip, timeout: 60_000 }, async () => {
  const { holder, context, page, problems } = await rig.signedIn('pay');
  // A policy bound without a card: nothing on file yet.
  await page.goto(`${rig.baseUrl}/app/cards`);
  await page.getByText('No card on file.').waitFor();
  await assertAccessible(page, 'cards, none on file');
  // The service answers 409 for a policy with no customer at the processor ("no card on file"), and
  // Chromium logs every refused request; that one is expected, nothing else is.
  assert.deepEqual(problems.splice(0), [
    'Failed to load resource: the server responded with a status of 409 (Conflict)',
  ]);

  const { version, billed } = await failedStatement(holder.reference);

  await page.goto(`${rig.baseUrl}/app/statements`);
  await page.getByRole('heading', { name: 'Statements', level: 1 }).waitFor();
  const statement = page.getByTestId('statement').first();
  await statement.getByTestId('payment-status').filter({ hasText: 'Payment failed' }).waitFor();
  assert.match(
    await statement.getByTestId('payment-failure').innerText(),
    /does not have enough funds/,
    'the decline reason as a sentence',
  );
  const text = await statement.innerText();
  assert.match(text, /Usage premium\s*£\d/);
  assert.match(text, /Billed\s*£\d/);
  await statement.locator('summary').click();
  assert.match(await statement.locator('.journey-lines').innerText(), /miles, £\d/, 'the journey');
  // One date style on the card: its period's dates, and the journey's date with its time.
  const MONTH = '(January|February|March|April|May|June|July|August|September|October|November|December)';
  assert.match(
    await statement.locator('h2').innerText(),
    new RegExp(`^\\d{1,2} ${MONTH} \\d{4} to \\d{1,2} ${MONTH} \\d{4}$`),
  );
  assert.match(
    await statement.locator('.journey-lines .when').first().innerText(),
    new RegExp(`^\\d{1,2} ${MONTH} \\d{4} at \\d{2}:\\d{2}$`),
  );
  const dates = (await statement.innerText()).match(/\d{1,2} [A-Z][a-z]+ \d{4}/g) ?? [];
  assert.ok(dates.length >= 3);
  for (const date of dates) assert.match(date, new RegExp(`^\\d{1,2} ${MONTH} \\d{4}$`), 'no short month');
  await assertFits(page, 360);
  await assertAccessible(page, 'statements with a failed payment');
  await shoot(page, 'statement-failed');

  // Keyboard only: the button, then the card form (focus starts in the card number).
  await tabTo(page, '.statement button.primary', 30);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Update card and pay now' }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('autocomplete')), 'cc-number');
  await assertAccessible(page, 'the card form');
  await shoot(page, 'card-form');
  // A mistyped number (its checksum) is told in words before anything is sent.
  await page.keyboard.type('4242 4242 4242 4241');
  await page.keyboard.press('Tab');
  await page.keyboard.type('12/30');
  await page.keyboard.press('Tab');
  await page.keyboard.type('123');
  await page.keyboard.press('Enter');
  await page.getByRole('alert').filter({ hasText: 'Please check the card details.' }).waitFor();
  await page.getByText('That card number is not right. Please check it.').waitFor();
  await page.getByLabel('Card number').fill('');
  await page.getByLabel('Card number').focus();
  await page.keyboard.type('4242 4242 4242 4242');
  await page.keyboard.press('Enter');

  await page.getByRole('status').filter({ hasText: 'is paid with your new card' }).waitFor();
  await statement.getByTestId('payment-status').filter({ hasText: 'Paid £' }).waitFor();
  assert.equal(await statement.getByRole('button', { name: 'Update card and pay now' }).count(), 0);
  const charges = (await paymentsOf(holder.reference)).filter(
    (p) => p.purpose === 'statement' && p.policy_version_reference === version,
  );
  assert.deepEqual(
    charges.filter((p) => p.status === 'succeeded').map((p) => p.amount),
    [billed],
    'one succeeded charge of the billed amount',
  );
  await assertFits(page, 360);
  await assertAccessible(page, 'statements, paid');
  await shoot(page, 'statements');

  // The payment methods page shows the card just added as the default.
  await page.getByRole('link', { name: 'Payment methods' }).click();
  await page.getByRole('heading', { name: 'Payment methods', level: 1 }).waitFor();
  await page.getByTestId('default-card').filter({ hasText: 'Visa •••• 4242' }).waitFor();
  assert.match(await page.getByTestId('default-card').innerText(), /Expires 12\/2030/);
  await assertFits(page, 360);
  await assertAccessible(page, 'cards');
  await shoot(page, 'cards');

  // On a desktop, another card from the payment methods page becomes the default.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('button', { name: 'Add a card' }).click();
  await page.getByLabel('Card number').fill('5555 5555 5555 4444');
  await page.getByLabel('Expiry date (MM/YY)').fill('08/29');
  await page.getByLabel('Security code').fill('1234');
  await page.getByRole('button', { name: 'Save card' }).click();
  await page.getByRole('status').filter({ hasText: 'Your new card is saved.' }).waitFor();
  await page.getByTestId('default-card').filter({ hasText: 'Mastercard •••• 4444' }).waitFor();
  assert.match(await page.getByTestId('default-card').innerText(), /Expires 08\/2029/);
  await shoot(page, 'cards-desktop');

  assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)');
  await context.close();
});
