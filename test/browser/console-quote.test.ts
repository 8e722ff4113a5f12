import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { bindingPolicy, quoteInput } from '../integration/quotes/quote-support.ts';
import { exactPounds } from '../../web/console/src/quote-input.ts';
import { assertAccessible, assertFits, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { startRatedConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// The console's quote page: reached from the referral queue and from the policy bound from a quote, by
// keyboard, at 360 px; every figure of the breakdown as GET /admin/quotes/:quote_reference answers it.

declare const document: { activeElement: { tagName: string; textContent: string | null } | null };

interface Factor {
  name: string;
  driver: string | null;
  applies_to: string;
  matched: string;
  factor: string;
}
interface StaffQuote {
  quote_reference: string;
  status: string;
  rate_book_reference: string;
  rate_book_version: number;
  pricing: { upfront_premium: number; usage_rate: number };
  breakdown: {
    factors: Factor[];
    fixed: Record<string, string | number | null>;
    per_unit: Record<string, string>;
    installments: Record<string, string | number>;
    usage_estimate: Record<string, string | number>;
    rounding: string;
  };
  decision: { reasons: Array<{ reason: string }> };
  bound_policy_reference: string | null;
}

let rig: ConsoleRig;
before(async () => {
  if (skip !== false) return;
  rig = await startRatedConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** The worked example's quote, its term starting tomorrow (the rig runs on the real clock). */
function termFromTomorrow(input: ReturnType<typeof quoteInput>): ReturnType<typeof quoteInput> {
  const start = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400;
  (input.policy as { start_date: number; end_date: number }).start_date = start;
  (input.policy as { start_date: number; end_date: number }).end_date = start + 365 * 86_400 - 1;
  return input;
}

async function newQuote(input: object): Promise<StaffQuote> {
  const made = await rig.t.app.inject({
    method: 'POST',
    url: '/quotes',
    headers: rig.acme.sandbox,
    payload: input,
  });
  assert.equal(made.statusCode, 201, made.body);
  return made.json<StaffQuote>();
}

/** The quote as the console's own route answers it. */
async function staffQuote(reference: string): Promise<StaffQuote> {
  const answer = await rig.t.app.inject({
    method: 'GET',
    url: `/admin/quotes/${reference}?company_reference=${rig.acme.company_reference}&environment=sandbox`,
    headers: rig.t.adminHeaders,
  });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json<StaffQuote>();
}

/** Tabs until the focused element's text is `text` (at most `most` presses). */
async function tabToText(page: Page, text: string, most = 60): Promise<string[]> {
  const reached: string[] = [];
  for (let i = 0; i < most && !reached.includes(text); i++) {
    await page.keyboard.press('Tab');
    reached.push(await page.evaluate(() => document.activeElement?.textContent ?? ''));
  }
  assert.ok(reached.includes(text), `tab order: ${reached.join(' | ')}`);
  return reached;
}

/** The page's breakdown equals the API's: each factor in order, and each figure of each part. */
async function assertBreakdownShown(page: Page, quote: StaffQuote): Promise<void> {
  const rows = page
    .getByRole('region', { name: `Breakdown of quote ${quote.quote_reference}` })
    .locator('tbody tr');
  assert.equal(await rows.count(), quote.breakdown.factors.length);
  for (const [i, factor] of quote.breakdown.factors.entries()) {
    const cells = await rows.nth(i).locator('th, td').allInnerTexts();
    assert.deepEqual(
      [cells[0], cells[3], cells[4]],
      [
        factor.driver === null ? factor.name : `${factor.name} (${factor.driver})`,
        factor.matched,
        factor.factor,
      ],
    );
  }
  const { fixed, per_unit: perUnit, installments, usage_estimate: usage } = quote.breakdown;
  const text = async (id: string) => page.getByTestId(id).innerText();
  const fixedText = await text('breakdown-fixed');
  for (const figure of [
    exactPounds(String(fixed['base_pence'])),
    String(fixed['factor']),
    exactPounds(String(fixed['before_limits_pence'])),
    exactPounds(String(fixed['min_pence'])),
    exactPounds(String(fixed['max_pence'])),
    exactPounds(String(fixed['after_limits_pence'])),
    exactPounds(String(fixed['exact_pence'])),
    exactPounds(String(fixed['rounded_pence'])),
  ])
    assert.ok(fixedText.includes(figure), `fixed part shows ${figure}: ${fixedText}`);
  const perUnitText = await text('breakdown-per-unit');
  for (const figure of [perUnit['base_rate'], perUnit['factor'], perUnit['exact'], perUnit['rounded']])
    assert.ok(perUnitText.includes(String(figure)), `per unit shows ${String(figure)}`);
  const planText = await text('breakdown-plan');
  for (const figure of [
    exactPounds(String(installments['exact_total_pence'])),
    exactPounds(String(installments['upfront_pence'])),
    exactPounds(String(installments['installment_pence'])),
    `${String(installments['apr_percent'])} %`,
  ])
    assert.ok(planText.includes(figure), `plan shows ${figure}: ${planText}`);
  const usageText = await text('breakdown-usage');
  for (const figure of [
    exactPounds(String(usage['exact_pence'])),
    exactPounds(String(usage['rounded_pence'])),
  ])
    assert.ok(usageText.includes(figure), `usage shows ${figure}`);
  assert.ok((await text('breakdown-rounding')).includes(quote.breakdown.rounding));
  const pricingText = await text('quote-pricing');
  const upfront = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }).format(
    quote.pricing.upfront_premium,
  );
  assert.ok(pricingText.includes(upfront), `pricing shows ${upfront}: ${pricingText}`);
}

test(
  'a referred quote from the queue, a bound one from its policy: the breakdown as the API has it, at 360 px',
  { skip, timeout: 120_000 },
  async () => {
    const referredInput = termFromTomorrow(
      quoteInput((q) => {
        (q.vehicle as { is_import: boolean }).is_import = true;
      }),
    );
    const referred = await staffQuote((await newQuote(referredInput)).quote_reference);
    assert.equal(referred.status, 'referred');
    const viewer = await rig.signedInStaff('quote-viewer', 'viewer', 360);
    const { page, problems } = viewer;
    page.setDefaultTimeout(15_000);

    // From the referral queue, by keyboard: the quote's reference is a link to its page.
    await page.goto(`${rig.baseUrl}/console/referrals`);
    await page.getByRole('heading', { name: 'Referrals', level: 1 }).waitFor();
    await page.getByLabel('Company', { exact: true }).selectOption(rig.acme.company_reference);
    await page.getByLabel('Environment', { exact: true }).selectOption('sandbox');
    await page.getByRole('link', { name: referred.quote_reference }).waitFor();
    await tabToText(page, referred.quote_reference, 80);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Quote ${referred.quote_reference}`, level: 1 }).waitFor();
    assert.match(await page.getByTestId('quote-status').innerText(), /referred/);
    assert.match(await page.getByTestId('quote-applicant').innerText(), /Amelia Rose Clarke/);
    assert.match(await page.getByTestId('quote-applicant').innerText(), /AB12 CDE/);
    for (const reason of referred.decision.reasons)
      assert.match(
        await page.getByTestId('quote-decision').locator('..').innerText(),
        new RegExp(reason.reason),
      );
    await assertBreakdownShown(page, referred);
    await assertAccessible(page, 'console quote referred');
    await assertFits(page, 360);
    await shoot(page, 'console-quote-360');

    // The rate book version is a link, reached by Tab, that opens the version on the rate books page.
    const versionLink = `${referred.rate_book_reference} version ${String(referred.rate_book_version)}`;
    await tabToText(page, versionLink);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Rate books', level: 1 }).waitFor();
    await page.getByRole('heading', { name: /Versions of/ }).waitFor();
    await page.getByTestId('version-content').waitFor();
    assert.deepEqual(unexpected(problems), []);

    // A quote bound to a policy: the policy page links to it; its page links back.
    const input = termFromTomorrow(quoteInput());
    const accepted = await newQuote(input);
    const bound = await rig.t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: rig.acme.sandbox,
      payload: bindingPolicy(input, accepted as never),
    });
    assert.equal(bound.statusCode, 201, bound.body);
    const policyReference = bound.json<{ policy_reference: string }>().policy_reference;
    const desk = await rig.signedInStaff('quote-desk', 'viewer');
    desk.page.setDefaultTimeout(15_000);
    await desk.page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${policyReference}`,
    );
    await desk.page.getByRole('link', { name: accepted.quote_reference }).click();
    await desk.page.getByRole('heading', { name: `Quote ${accepted.quote_reference}`, level: 1 }).waitFor();
    const shown = await staffQuote(accepted.quote_reference);
    assert.equal(shown.bound_policy_reference, policyReference);
    assert.match(await desk.page.getByTestId('quote-status').innerText(), /bound/);
    await desk.page.getByTestId('quote-state').getByRole('link', { name: policyReference }).waitFor();
    await assertBreakdownShown(desk.page, shown);
    await assertAccessible(desk.page, 'console quote bound');
    assert.deepEqual(unexpected(desk.problems), []);
  },
);
