import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make as factories } from '../../support/factories.ts';
import { postQuote, quoteInput, type Quote } from '../quotes/quote-support.ts';
import { exampleRateBookContent, make } from '../rating/rate-book-support.ts';
import { signInStaff } from '../staff/staff-support.ts';

/*
 * A monthly quote bought in the web app (term from 1 June 2025, 12 installments, a £5 deposit): the
 * first installment and the deposit are paid at purchase, so no statement bills that installment. The
 * premium bordereau carries it on the policy's `nb` row, split as every row is, and the month's totals
 * reconcile with the cash report's receipt for the policy.
 */

type Row = Record<string, string | number | null>;
interface Report {
  rows: Row[];
  totals: Record<string, number>;
}
interface CashReport {
  payments: Array<{ policy_reference: string | null; version_type: string | null; amount: number }>;
  totals: { collected: number };
}

const DEPOSIT_PENCE = 500;
const clock = fixedClock('2025-05-20T12:00:00Z');
const pence = (pounds: unknown) => Math.round(Number(pounds) * 100);
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let reference = '';
let paidPence = 0;
let installmentPence = 0;

before(async () => {
  t = await createTestApp({ listen: true, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  // The worked example's rate book with a deposit for arranging the monthly plan.
  const example = exampleRateBookContent();
  const content = { ...example, fees: { ...example.fees, deposit_fee_pence: DEPOSIT_PENCE } };
  await make.rateBook(t, acme.sandbox, 'pay-by-mile-car', 'car-rates');
  const as = (staff: typeof ada) => ({ ...staff.headers, client_id: acme.client_id, environment: 'sandbox' });
  await make.approvedVersion(t, 'car-rates', as(ada), as(bob), content);

  const publicHeaders = { client_id: acme.client_id, environment: 'sandbox' };
  const input = quoteInput((q) => {
    (q as { installment_plan: string }).installment_plan = 'monthly';
  });
  const quote = (await postQuote(t, publicHeaders, input)).json<Quote & { purchase_secret: string }>();
  installmentPence = pence(quote.pricing['subscription_premium']);
  const bought = await t.app.inject({
    method: 'POST',
    url: `/quotes/${quote.quote_reference}/purchase`,
    headers: { ...publicHeaders, purchase_secret: quote.purchase_secret },
    payload: { payment_method_id: 'pm_card_visa', installment_plan: 'monthly' },
  });
  assert.equal(bought.statusCode, 201, bought.body);
  const bound = bought.json<{ policy_reference: string; amount_paid: number }>();
  reference = bound.policy_reference;
  paidPence = pence(bound.amount_paid);
  assert.equal(pence(quote.pricing.upfront_premium), 0, 'the monthly plan has no upfront premium');
  assert.equal(paidPence, DEPOSIT_PENCE + installmentPence, 'the deposit and the first installment');

  // June's statement (the first installment paid at purchase: usage alone), then July's (one installment).
  clock.set('2025-07-01T02:00:00Z');
  await factories.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
  clock.set('2025-08-01T02:00:00Z');
  await factories.statement(t.app, acme, reference, '2025-07-31T22:59:59Z');
});
after(() => t.close());

const bordereau = (month: string, format: 'json' | 'csv') =>
  t.app.inject({
    url: `/admin/reports/bordereau?${new URLSearchParams({
      company_reference: acme.company_reference,
      environment: 'sandbox',
      month,
      format,
    }).toString()}`,
    headers: t.adminHeaders,
  });

async function bordereauJson(month: string): Promise<Report> {
  const answer = await bordereau(month, 'json');
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json<Report>();
}

/** numerator ÷ denominator (both whole, the denominator positive), rounded half to even. */
function roundHalfEven(numerator: number, denominator: number): number {
  const quotient = Math.floor(numerator / denominator);
  const twice = 2 * (numerator - quotient * denominator);
  if (twice > denominator || (twice === denominator && quotient % 2 !== 0)) return quotient + 1;
  return quotient;
}

test('the installment paid at purchase is on the nb row, split to the penny; the deposit is its fee', async () => {
  const june = await bordereauJson('2025-06');
  const rows = june.rows.filter((row) => row['policy_reference'] === reference);
  assert.deepEqual(
    rows.map((row) => row['version_type']),
    ['nb', 'st'],
  );
  const [nb, st] = rows as [Row, Row];
  assert.equal(pence(nb['upfront_premium']), 0);
  assert.equal(pence(nb['subscription_premium']), installmentPence);
  assert.equal(pence(nb['gross_premium']), installmentPence);
  assert.equal(pence(nb['fees']), DEPOSIT_PENCE);
  // IPT = round(G × 12 ÷ 112), commission = round((G − IPT) × 15 %), net the rest: the finance.md split.
  const [iptRate, commissionRate] = [Number(nb['ipt_rate']), Number(nb['commission_rate'])];
  assert.deepEqual([iptRate, commissionRate], [12, 15]);
  const ipt = roundHalfEven(installmentPence * iptRate, 100 + iptRate);
  const commission = roundHalfEven((installmentPence - ipt) * commissionRate, 100);
  assert.deepEqual(
    [pence(nb['ipt']), pence(nb['commission']), pence(nb['net_premium'])],
    [ipt, commission, installmentPence - ipt - commission],
  );
  // The statement skips the installment paid at binding: it is counted once, on the nb row.
  assert.deepEqual(
    ['subscription_premium', 'usage_premium', 'gross_premium'].map((key) => pence(st[key])),
    [0, 0, 0],
  );

  // July's statement bills the second installment: two of the plan's installments, each counted once.
  const july = (await bordereauJson('2025-07')).rows.filter((row) => row['policy_reference'] === reference);
  assert.deepEqual(
    july.map((row) => [row['version_type'], pence(row['subscription_premium'])]),
    [['st', installmentPence]],
  );
});

test('the month’s totals reconcile with the cash report’s receipt for the policy', async () => {
  const june = await bordereauJson('2025-06');
  const cashAnswer = await t.app.inject({
    url: `/admin/reports/cash?${new URLSearchParams({
      company_reference: acme.company_reference,
      environment: 'sandbox',
      from: '2025-05-01',
      to: '2025-06-30',
    }).toString()}`,
    headers: t.adminHeaders,
  });
  assert.equal(cashAnswer.statusCode, 200, cashAnswer.body);
  const cash = cashAnswer.json<CashReport>();
  // The one receipt: the purchase, against the nb version; June's statement billed nothing.
  assert.deepEqual(
    cash.payments.map((p) => [p.policy_reference, p.version_type, pence(p.amount)]),
    [[reference, 'nb', paidPence]],
  );
  const totals = june.totals;
  const [gross, ipt, commission, net, fees] = [
    'gross_premium',
    'ipt',
    'commission',
    'net_premium',
    'fees',
  ].map((key) => pence(totals[key])) as [number, number, number, number, number];
  assert.equal(gross + fees, pence(cash.totals.collected), 'premium and fees are the cash received');
  assert.equal(gross, paidPence - DEPOSIT_PENCE, 'the premium received: the receipt less the deposit');
  assert.equal(ipt + commission + net, gross);
  const nb = june.rows.find((row) => row['version_type'] === 'nb');
  assert.deepEqual(
    [ipt, commission],
    [pence(nb?.['ipt']), pence(nb?.['commission'])],
    'the IPT and commission of the receipt',
  );
});

test('the CSV carries the same nb row and totals as the JSON', async () => {
  const json = await bordereauJson('2025-06');
  const answer = await bordereau('2025-06', 'csv');
  assert.equal(answer.statusCode, 200, answer.body);
  const records = parse<Record<string, string>>(answer.body, { columns: true });
  const nbCsv = records.find((r) => r['policy_reference'] === reference && r['version_type'] === 'nb');
  const nbJson = json.rows.find((row) => row['version_type'] === 'nb');
  assert.ok(nbCsv !== undefined && nbJson !== undefined);
  const total = records.find((r) => r['company_reference'] === 'TOTAL');
  assert.ok(total !== undefined);
  for (const key of ['subscription_premium', 'gross_premium', 'ipt', 'commission', 'net_premium', 'fees']) {
    assert.equal(pence(nbCsv[key]), pence(nbJson[key]), key);
    assert.equal(pence(total[key]), pence(json.totals[key]), `TOTAL ${key}`);
  }
  assert.equal(pence(nbCsv['subscription_premium']), installmentPence);
});
