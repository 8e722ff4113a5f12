import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  tabTo,
} from './browser-support.ts';
import { startRatedConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// Quote and buy in the policyholder app, keyboard only: the questions a step at a time, the quote with
// its price a month and a mile, the sandbox's test card, the first payment, the policy bound and the
// new policyholder signed in on the policy page.
let rig: ConsoleRig;
before(async () => {
  if (skip !== false) return;
  rig = await startRatedConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** Types each answer into the focused field and moves on with Tab; Enter submits the step. */
async function answer(page: Page, values: readonly string[]): Promise<void> {
  for (const [i, value] of values.entries()) {
    await page.keyboard.type(value);
    if (i < values.length - 1) await page.keyboard.press('Tab');
  }
  await page.keyboard.press('Enter');
}

/** The five steps of questions, by keyboard, from the car to the mileage; `imported` refers the quote. */
async function askForQuote(
  page: Page,
  tag: string,
  email: string,
  imported = false,
  plan: 'single' | 'monthly' = 'single',
): Promise<void> {
  await tabTo(page, 'input[name=reg]');
  for (const value of ['AB12 CDE', 'Volkswagen', 'Golf', '11500', '19', '2017']) {
    await page.keyboard.type(value);
    await page.keyboard.press('Tab');
  }
  // The import question is a list: a letter picks its answer, and Enter on the button goes on.
  await page.keyboard.type(imported ? 'y' : 'n');
  await tabTo(page, 'button[type=submit]');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Get a quote: the drivers' }).waitFor();
  await answer(page, ['Amelia', 'Clarke', email, '14/03/1988', '02/07/2006', '4']);
  await shoot(page, `quote-drivers-${tag}`);
  await page.getByRole('heading', { name: 'Get a quote: where the car is kept' }).waitFor();
  await answer(page, ['12 Station Road', 'London', 'EC1A 1BB']);
  await page.getByRole('heading', { name: 'Get a quote: cover and excess' }).waitFor();
  await assertAccessible(page, `quote cover ${tag}`);
  if (plan === 'monthly') {
    // A letter picks the list's answer: "Monthly, the first month today".
    await tabTo(page, 'select[name=installment_plan]');
    await page.keyboard.type('m');
  }
  await tabTo(page, 'button[type=submit]');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Get a quote: your mileage' }).waitFor();
  await answer(page, ['6000']);
}

/**
 * After buying: the sign-in the answer leads to, with the temporary password of the welcome email (only
 * the mailbox proves the email is the buyer's), then a password of their own, to the policy page.
 */
async function signInFromWelcome(page: Page, email: string) {
  const temporary = (await rig.emails(email))
    .map((text) => /^Temporary password: (\S+)\r?$/m.exec(text)?.[1])
    .find((found) => found !== undefined);
  assert.ok(temporary !== undefined, 'the welcome email carries a temporary password');
  await page.getByRole('button', { name: 'Sign in' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  await tabTo(page, 'input[name=username]');
  await answer(page, [email, temporary]);
  await page.getByRole('heading', { name: 'Choose a password' }).waitFor();
  await tabTo(page, 'input[name=new_password]');
  await answer(page, ['Juniper-Harbour-Lantern-42', 'Juniper-Harbour-Lantern-42']);
  await page.getByRole('heading', { name: 'My policy' }).waitFor();
}

async function quoteAndBuy(width: number, tag: string, plan: 'single' | 'monthly' = 'single') {
  const { context, page, problems } = await rig.newPage(width);
  await page.goto(`${rig.baseUrl}/app/sign-in?product=pay-by-mile-car`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  // The sign-in page leads to a quote.
  await page.getByRole('link', { name: 'Get a quote' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Get a quote: your car' }).waitFor();
  await assertAccessible(page, `quote car ${tag}`);
  await askForQuote(page, tag, `buyer.${tag}.${String(process.pid)}@example.com`, false, plan);
  const email = `buyer.${tag}.${String(process.pid)}@example.com`;
  await page.getByRole('heading', { name: 'Your quote' }).waitFor();
  const quoteText = await page.locator('main').innerText();
  assert.match(quoteText, /£[\d.,]+ a month plus [\d.]+p a mile/);
  assert.match(
    quoteText,
    plan === 'monthly' ? /in 12 monthly installments of £[\d.,]+, the first today/ : /is paid today/,
  );
  await assertFits(page, width);
  await assertAccessible(page, `quote ${tag}`);
  await shoot(page, `quote-${tag}`);
  // The card form takes the keyboard at its card number.
  await answer(page, ['4242 4242 4242 4242', '12/34', '123']);
  await page.getByRole('heading', { name: 'Sign in to your policy' }).waitFor();
  await assertAccessible(page, `quote bought ${tag}`);
  const [welcome = ''] = await rig.emails(email);
  assert.match(welcome, /Volkswagen|policy/i, 'the welcome email is queued');
  await signInFromWelcome(page, email);
  assert.equal(new URL(page.url()).pathname, '/app/policy');
  await assertFits(page, width);
  await shoot(page, `quote-policy-${tag}`);
  assert.deepEqual(problems, [], 'no console errors');
  await context.close();
}

test('quote and buy at 360 px, keyboard only, to the policy page', { skip, timeout: 120_000 }, async () => {
  await quoteAndBuy(360, 'phone');
});

test('quote and buy on a desktop, keyboard only, paying monthly', { skip, timeout: 120_000 }, async () => {
  await quoteAndBuy(1280, 'desktop', 'monthly');
});

test(
  'a referred quote is approved in the console, then bought in the app',
  { skip, timeout: 150_000 },
  async () => {
    const { context, page, problems } = await rig.newPage(360);
    await page.goto(`${rig.baseUrl}/app/quote?product=pay-by-mile-car`);
    await page.getByRole('heading', { name: 'Get a quote: your car' }).waitFor();
    await tabTo(page, 'input[name=reg]');
    await askForQuote(page, 'referred', `referred.${String(process.pid)}@example.com`, true);
    await page.getByRole('heading', { name: 'Your quote needs an underwriter' }).waitFor();
    await assertAccessible(page, 'quote referred');
    const reference = (await page.locator('.reference').innerText()).trim();
    const buyHref = await page.getByRole('link', { name: /buy this quote/ }).getAttribute('href');
    assert.ok(buyHref !== null);
    // The quote's purchase secret is kept in this tab's session storage, never in the buying link.
    const kept = await page.evaluate(() =>
      Object.keys(sessionStorage)
        .filter((key) => key.startsWith('milepost.quote-secret.'))
        .map((key) => sessionStorage.getItem(key) ?? ''),
    );
    assert.equal(kept.length, 1);
    assert.ok(kept[0]!.length >= 43 && !buyHref.includes(kept[0]!) && !page.url().includes(kept[0]!));

    const olly = await rig.signedInStaff('underwriter', 'operations', 1280);
    await olly.page.goto(`${rig.baseUrl}/console/referrals`);
    await olly.page.getByRole('heading', { name: 'Referrals', level: 1 }).waitFor();
    await olly.page.getByLabel('Company', { exact: true }).selectOption(rig.acme.company_reference);
    await olly.page.getByLabel('Environment', { exact: true }).selectOption('sandbox');
    const card = olly.page.getByRole('region', { name: `Quote ${reference}` });
    await card.getByRole('heading', { name: `Quote ${reference}` }).waitFor();
    await assertAccessible(olly.page, 'referral queue');
    await shoot(olly.page, 'referral-queue');
    await card.getByLabel('Reason').focus();
    await olly.page.keyboard.type('Import papers checked');
    await olly.page.keyboard.press('Enter');
    await olly.page
      .getByRole('status')
      .filter({ hasText: `Quote ${reference} approved` })
      .waitFor();
    assert.deepEqual(unexpected(olly.problems), []);
    await olly.context.close();

    await page.goto(`${rig.baseUrl}${buyHref}`);
    await page.getByRole('heading', { name: 'Buy your quote' }).waitFor();
    await assertAccessible(page, 'buy approved quote');
    await answer(page, ['4242 4242 4242 4242', '12/34', '123']);
    await page.getByRole('heading', { name: 'Sign in to your policy' }).waitFor();
    await signInFromWelcome(page, `referred.${String(process.pid)}@example.com`);
    assert.deepEqual(problems, [], 'no console errors');
    await context.close();
  },
);
