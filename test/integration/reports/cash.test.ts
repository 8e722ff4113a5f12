import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { fixedClock } from '../../../src/platform/clock.ts';
import { toPence } from '../../../src/platform/money.ts';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { openCashReport } from '../../../src/modules/reports/cash-report.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { signInStaff } from '../staff/staff-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

interface ApiPayment {
  payment_reference: string;
  type: string;
  purpose: string;
  status: string;
  amount: number;
  refunded_amount: number;
  provider_payment_reference: string | null;
  policy_version_reference: string | null;
  next_attempt_at: string | null;
}
interface CashPayment {
  day: string;
  payment_reference: string;
  kind: string;
  purpose: string;
  status: string;
  amount: number;
  refunded_amount: number;
  currency: string;
  provider: string;
  provider_payment_reference: string | null;
  refund_of: string | null;
  policy_reference: string | null;
  policy_version_reference: string | null;
  version_type: string | null;
  statement_start_date: string | null;
  statement_end_date: string | null;
  decline_code: string | null;
  attempts: number;
  in_dunning: boolean;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}
interface Totals {
  charges: number;
  refunds: number;
  billed: number;
  charged: number;
  refunded: number;
  collected: number;
  pending: number;
  outstanding: number;
  in_dunning: number;
  refunds_outstanding: number;
}
interface CashReport {
  company_reference: string;
  environment: string;
  from: string;
  to: string;
  generated_at: string;
  payments: CashPayment[];
  days: Array<Totals & { day: string }>;
  totals: Totals;
}

const TOTAL_KEYS: Array<keyof Totals> = [
  'charges',
  'refunds',
  'billed',
  'charged',
  'refunded',
  'collected',
  'pending',
  'outstanding',
  'in_dunning',
  'refunds_outstanding',
];

// The example policy's term: 2025-06-01 to 2026-05-31 (London), billing day 1, upfront 95.50,
// 12 installments of 29.99, mta_fee 20, cancel_fee 50, admin_fee 25.
const clock = fixedClock('2025-06-05T09:00:00Z');
let t: TestApp;
let acme: Company;
let other: Company;
const policies: Record<'p1' | 'p2' | 'p3', string> = { p1: '', p2: '', p3: '' };
let otherPolicy = '';

const report = async (query: Record<string, string>, headers: Record<string, string> = t.adminHeaders) =>
  t.app.inject({
    url: `/admin/reports/cash?${new URLSearchParams({
      company_reference: acme.company_reference,
      environment: 'sandbox',
      from: '2025-06-01',
      to: '2025-07-31',
      ...query,
    }).toString()}`,
    headers,
  });

const reportJson = async (query: Record<string, string> = {}): Promise<CashReport> => {
  const r = await report(query);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<CashReport>();
};

const paymentsOf = async (reference: string): Promise<ApiPayment[]> => {
  const r = await t.app.inject({ url: `/payments?policy_reference=${reference}`, headers: acme.sandbox });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ payments: ApiPayment[] }>().payments;
};

async function waitFor(reference: string, done: (list: ApiPayment[]) => boolean): Promise<ApiPayment[]> {
  for (let i = 0; i < 150; i++) {
    const list = await paymentsOf(reference);
    if (done(list)) return list;
    await sleep(100);
  }
  throw new Error(`payments of ${reference} did not settle: ${JSON.stringify(await paymentsOf(reference))}`);
}

const cardPaid = (company: Company, upfront: number) =>
  make.cardPaidPolicy(t, company, { pricing: { upfront_premium: upfront } });

const act = (body: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: acme.sandbox,
    payload: { product_reference: 'ppm-motor', ...body },
  });

/** The sums of the report's rows, by the summary's rules, in pence. */
function sumsOfRows(rows: readonly CashPayment[]) {
  const sum = (f: (p: CashPayment) => boolean) => rows.filter(f).reduce((s, p) => s + toPence(p.amount), 0);
  const charge = (p: CashPayment) => p.kind === 'charge';
  const charged = sum((p) => charge(p) && (p.status === 'succeeded' || p.status === 'refunded'));
  const refunded = sum((p) => p.kind === 'refund' && p.status === 'succeeded');
  return {
    charges: rows.filter(charge).length,
    refunds: rows.filter((p) => !charge(p)).length,
    billed: sum((p) => charge(p) && p.status !== 'canceled'),
    charged,
    refunded,
    collected: charged - refunded,
    pending: sum((p) => charge(p) && p.status === 'pending'),
    outstanding: sum((p) => charge(p) && (p.status === 'failed' || p.status === 'requires_action')),
    in_dunning: sum((p) => p.in_dunning),
    refunds_outstanding: sum((p) => p.kind === 'refund' && p.status !== 'succeeded'),
  };
}

/** Totals in pence (counts as they are), for exact comparison. */
const inPence = (x: Totals): Record<keyof Totals, number> =>
  Object.fromEntries(
    TOTAL_KEYS.map((k) => [k, k === 'charges' || k === 'refunds' ? x[k] : toPence(x[k])]),
  ) as Record<keyof Totals, number>;

function assertBalanced(body: CashReport): void {
  // The totals are the sums of the days, and of the rows.
  for (const key of TOTAL_KEYS) {
    const ofDays = body.days.reduce((s, d) => s + inPence(d)[key], 0);
    assert.equal(ofDays, inPence(body.totals)[key], `${key}: days vs totals`);
  }
  assert.deepEqual(inPence(body.totals), sumsOfRows(body.payments));
  // Each day's totals are the sums of its own rows.
  for (const day of body.days)
    assert.deepEqual(inPence(day), sumsOfRows(body.payments.filter((p) => p.day === day.day)), day.day);
}

const TERM_START = examplePolicyInput().policy.start_date;
let unboundIntent = '';

before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: true, listen: true });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');

  // 5 June: two policies paid by card, another company's, and an intent never bound (no money moved).
  policies.p1 = (await cardPaid(acme, 95.5)).reference;
  const p2 = await cardPaid(acme, 100);
  policies.p2 = p2.reference;
  otherPolicy = (await cardPaid(other, 70)).reference;
  const unbound = await act({ type: 'CREATE_PAYMENT_INTENT', amount: 4200 });
  assert.equal(unbound.statusCode, 200, unbound.body);
  unboundIntent = unbound.json<{ payment_provider_transaction_ref: string }>()
    .payment_provider_transaction_ref;

  // 10 June: p2 adjusted from the start of its term (+20, and the 20 MTA fee); p3 bought, then
  // cancelled a second after the start in its cooling-off period (all 80 back: no cancel or admin fee
  // then; its final statement bills the first installment, due at the start, while cover ran).
  clock.set('2025-06-10T14:00:00Z');
  // The policy as first sent (no payment block), changed from the start of its term.
  await make.adjustment(t.app, acme, p2, {
    pricing: { upfront_premium: 120 },
    payment: undefined,
    effective_date: p2.input.policy.start_date,
  });
  await waitFor(policies.p2, (list) =>
    list.some((p) => p.purpose === 'adjustment' && p.status === 'succeeded'),
  );
  policies.p3 = (await cardPaid(acme, 80)).reference;
  const cancelled = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${policies.p3}`,
    headers: acme.sandbox,
    payload: { effective_date: TERM_START + 1, reason: 'changed their mind' },
  });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  // The final statement is charged by a job of its own: it must be asked for on 10 June too, before
  // the clock moves on (under load it once ran after, and counted on 1 July).
  await waitFor(
    policies.p3,
    (list) =>
      list.some((p) => p.purpose === 'cancellation' && p.status === 'succeeded') &&
      list.some((p) => p.purpose === 'statement'),
  );

  // p2's card is now one the processor declines for want of funds (a soft decline: dunning retries).
  const declining = await act({
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: policies.p2,
    payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds',
  });
  assert.equal(declining.statusCode, 200, declining.body);

  // 1 July, the billing day: p1's statement is charged, p2's declined.
  clock.set('2025-07-01T08:00:00Z');
  const run = await t.app.inject({
    method: 'POST',
    url: '/admin/billing-runs',
    headers: t.adminHeaders,
    payload: { date: '2025-07-01' },
  });
  assert.equal(run.statusCode, 200, run.body);
  await waitFor(policies.p1, (list) =>
    list.some((p) => p.purpose === 'statement' && p.status === 'succeeded'),
  );
  await waitFor(policies.p2, (list) => list.some((p) => p.purpose === 'statement' && p.status === 'failed'));
});
after(() => t.close());

const VERSION_TYPE_OF_PURPOSE: Record<string, string> = {
  new_business: 'nb',
  adjustment: 'mta',
  cancellation: 'cn',
  statement: 'st',
};

/** What GET /payments says was collected, net of refunds, over the given policies, in pence. */
async function collectedByPaymentsApi(references: readonly string[]): Promise<number> {
  let pence = 0;
  for (const reference of references)
    for (const p of await paymentsOf(reference)) {
      if (p.type === 'charge' && (p.status === 'succeeded' || p.status === 'refunded'))
        pence += toPence(p.amount);
      if (p.type === 'refund' && p.status === 'succeeded') pence -= toPence(p.amount);
    }
  return pence;
}

describe('GET /admin/reports/cash', () => {
  test('every payment and refund of the range, as GET /payments shows them, with what each settles', async () => {
    const body = await reportJson();
    assert.equal(body.company_reference, acme.company_reference);
    assert.equal(body.environment, 'sandbox');
    assert.equal(body.generated_at, clock.now().toISOString());
    const ours = Object.values(policies);
    const api = (await Promise.all(ours.map(paymentsOf))).flat();
    assert.deepEqual(
      new Set(body.payments.map((p) => p.payment_reference)),
      new Set(api.map((p) => p.payment_reference)),
      'the same payments as GET /payments',
    );
    assert.equal(body.payments.length, api.length);
    for (const p of api) {
      const row = body.payments.find((r) => r.payment_reference === p.payment_reference)!;
      assert.deepEqual(
        [row.kind, row.purpose, row.status, row.amount, row.refunded_amount, row.provider_payment_reference],
        [p.type, p.purpose, p.status, p.amount, p.refunded_amount, p.provider_payment_reference],
      );
      assert.equal(row.policy_version_reference, p.policy_version_reference);
      assert.equal(row.next_attempt_at, p.next_attempt_at);
      assert.equal(row.version_type, VERSION_TYPE_OF_PURPOSE[row.purpose], row.purpose);
      assert.ok(ours.includes(row.policy_reference ?? ''));
      assert.equal(row.currency, 'GBP');
      assert.equal(row.provider, 'stripe');
      assert.match(row.provider_payment_reference ?? '', /^(pi|re)_/);
    }
    // In created order; no other company's payment, no intent that never bound a policy.
    const created = body.payments.map((p) => p.created_at);
    assert.deepEqual(created, created.toSorted());
    assert.ok(!body.payments.some((p) => p.policy_reference === otherPolicy));
    assert.ok(!body.payments.some((p) => p.provider_payment_reference === unboundIntent));

    const refund = body.payments.find((p) => p.kind === 'refund')!;
    const p3Paid = body.payments.find(
      (p) => p.policy_reference === policies.p3 && p.purpose === 'new_business',
    )!;
    assert.equal(refund.refund_of, p3Paid.payment_reference);
    assert.equal(refund.amount, 80);
    assert.equal(p3Paid.refunded_amount, 80);

    // The billing day's statements (p3's cancellation issued its final statement on 10 June).
    const statements = body.payments.filter((p) => p.purpose === 'statement' && p.day === '2025-07-01');
    assert.equal(statements.length, 2);
    const final = body.payments.find((p) => p.purpose === 'statement' && p.policy_reference === policies.p3)!;
    assert.equal(final.day, '2025-06-10');
    assert.equal(final.version_type, 'st');
    assert.ok(final.statement_start_date !== null && final.statement_end_date !== null);
    for (const s of statements) {
      assert.equal(s.day, '2025-07-01');
      assert.equal(s.statement_start_date, '2025-05-31T23:00:00.000Z');
      assert.equal(s.statement_end_date, '2025-06-30T22:59:59.000Z');
    }
    const failed = statements.find((p) => p.policy_reference === policies.p2)!;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.decline_code, 'insufficient_funds');
    assert.equal(failed.attempts, 1);
    assert.equal(failed.in_dunning, true);
    assert.ok(failed.next_attempt_at !== null);
    assert.ok(body.payments.filter((p) => p !== failed).every((p) => !p.in_dunning));

    // The summary: every day of the range; the totals are the sums of the days and of the rows.
    assert.equal(body.days.length, 61);
    assert.deepEqual([body.days[0]?.day, body.days.at(-1)?.day], ['2025-06-01', '2025-07-31']);
    assertBalanced(body);
    const day = (on: string) => body.days.find((d) => d.day === on)!;
    assert.deepEqual(
      [day('2025-06-05').billed, day('2025-06-05').collected, day('2025-06-05').charges],
      [195.5, 195.5, 2],
    );
    assert.deepEqual(
      [
        toPence(day('2025-06-10').billed),
        toPence(day('2025-06-10').charged),
        toPence(day('2025-06-10').refunded),
        toPence(day('2025-06-10').collected),
      ],
      // p3's 80 and p2's 40 adjustment, p3's final statement; p3's refund of 80.
      [12000 + toPence(final.amount), 12000 + toPence(final.amount), 8000, 4000 + toPence(final.amount)],
    );
    const july = day('2025-07-01');
    assert.equal(toPence(july.outstanding), toPence(failed.amount));
    assert.equal(july.in_dunning, july.outstanding);
    assert.equal(toPence(july.billed), toPence(july.charged) + toPence(july.outstanding));
    assert.equal(day('2025-06-20').charges, 0);
    // It reconciles with GET /payments: what they show as collected, net of refunds.
    assert.equal(toPence(body.totals.collected), await collectedByPaymentsApi(ours));
    assert.equal(
      toPence(body.totals.collected),
      toPence(body.totals.charged) - toPence(body.totals.refunded),
    );
  });

  test('a failed payment later collected moves from outstanding to collected, on the day it was asked for', async () => {
    const before = await reportJson();
    const failed = before.payments.find((p) => p.purpose === 'statement' && p.status === 'failed')!;
    clock.set('2025-07-02T10:00:00Z');
    const card = await act({
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policies.p2,
      payment_method_id: 'pm_card_visa',
    });
    assert.equal(card.statusCode, 200, card.body);
    // The background worker may be trying the old card (its first retry is past): the card's route
    // leaves that attempt alone and its decline brings the charge forward, tried here on the new card.
    for (let i = 0; i < 20; i++) {
      const list = await paymentsOf(policies.p2);
      if (list.some((p) => p.purpose === 'statement' && p.status === 'succeeded')) break;
      await t.container.services.payments.collectDue(clock.now());
      await sleep(200);
      clock.advance(15 * 60_000);
    }
    await waitFor(policies.p2, (list) =>
      list.some((p) => p.purpose === 'statement' && p.status === 'succeeded'),
    );

    const after = await reportJson();
    const row = after.payments.find((p) => p.payment_reference === failed.payment_reference)!;
    assert.equal(row.status, 'succeeded');
    assert.equal(row.in_dunning, false);
    assert.equal(row.day, '2025-07-01');
    assert.ok(row.attempts >= 2);
    const was = before.days.find((d) => d.day === '2025-07-01')!;
    const now = after.days.find((d) => d.day === '2025-07-01')!;
    const amount = toPence(failed.amount);
    assert.equal(toPence(now.outstanding), toPence(was.outstanding) - amount);
    assert.equal(toPence(now.in_dunning), 0);
    assert.equal(toPence(now.collected), toPence(was.collected) + amount);
    assert.equal(now.billed, was.billed, 'what was billed does not change');
    assert.equal(toPence(after.totals.collected), toPence(before.totals.collected) + amount);
    assertBalanced(after);
    assert.equal(toPence(after.totals.collected), await collectedByPaymentsApi(Object.values(policies)));
  });

  test('CSV: the payments, or the summary with a total row; both parse back and match the JSON', async () => {
    const json = await reportJson();
    const r = await report({ format: 'csv' });
    assert.equal(r.statusCode, 200, r.body);
    assert.match(String(r.headers['content-type']), /^text\/csv/);
    assert.match(
      String(r.headers['content-disposition']),
      new RegExp(`attachment; filename="cash-${acme.company_reference}-sandbox-2025-06-01-2025-07-31\\.csv"`),
    );
    const records = parse<Record<string, string>>(r.body, { columns: true });
    assert.equal(records.length, json.payments.length);
    assert.deepEqual(Object.keys(records[0]!), Object.keys(json.payments[0]!));
    json.payments.forEach((p, i) => {
      const record = records[i]!;
      for (const [key, value] of Object.entries(p)) {
        const label = `${p.payment_reference} ${key}`;
        if (typeof value === 'number') assert.equal(Number(record[key]), value, label);
        else assert.equal(record[key], value === null ? '' : String(value), label);
      }
      // Money as the bordereau writes it: pounds with 2 decimals.
      assert.match(record['amount'] ?? '', /^-?\d+\.\d{2}$/);
    });

    const summary = await report({ format: 'csv', part: 'summary' });
    assert.equal(summary.statusCode, 200, summary.body);
    const rows = parse<Record<string, string>>(summary.body, { columns: true });
    assert.equal(rows.length, 62);
    assert.deepEqual(Object.keys(rows[0]!), ['day', ...TOTAL_KEYS]);
    const total = rows.at(-1)!;
    assert.equal(total['day'], 'total');
    for (const key of TOTAL_KEYS) {
      assert.equal(Number(total[key]), json.totals[key], key);
      const ofDays = rows.slice(0, -1).reduce((s, row) => s + toPence(Number(row[key])), 0);
      assert.equal(ofDays, toPence(json.totals[key]), `${key}: the day rows add up to the total row`);
    }
  });

  test('part: JSON with only the payments, or only the summary', async () => {
    const full = await reportJson();
    const onlyPayments = await reportJson({ part: 'payments' });
    assert.deepEqual(onlyPayments.payments, full.payments);
    assert.equal(onlyPayments.days, undefined);
    const onlySummary = await reportJson({ part: 'summary' });
    assert.equal(onlySummary.payments, undefined);
    assert.deepEqual([onlySummary.days, onlySummary.totals], [full.days, full.totals]);
  });

  test('read in keyset batches, the report is the same whatever the batch size', async () => {
    const company = await t.container.database.db
      .selectFrom('companies')
      .select('id')
      .where('company_reference', '=', acme.company_reference)
      .executeTakeFirstOrThrow();
    const read = async (batchSize: number, format: 'json' | 'csv') => {
      let text = '';
      for await (const chunk of await openCashReport(t.container.database.db, {
        tenant: asTenant(company.id, 'sandbox'),
        companyReference: acme.company_reference,
        environment: 'sandbox',
        fromOn: '2025-06-01',
        toOn: '2025-07-31',
        format,
        part: format === 'csv' ? 'payments' : 'all',
        generatedAt: clock.now(),
        batchSize,
      }))
        text += chunk;
      return text;
    };
    const whole = await read(10_000, 'json');
    assert.equal((JSON.parse(whole) as CashReport).payments.length, (await reportJson()).payments.length);
    for (const size of [1, 2, 3]) {
      assert.equal(await read(size, 'json'), whole, `JSON in batches of ${String(size)}`);
      assert.equal(await read(size, 'csv'), await read(10_000, 'csv'), `CSV in batches of ${String(size)}`);
    }
  });

  test('only the company, environment and London days asked for', async () => {
    const others = await report({ company_reference: other.company_reference });
    assert.equal(others.statusCode, 200, others.body);
    const theirs = others.json<CashReport>();
    assert.ok(theirs.payments.every((p) => p.policy_reference === otherPolicy));
    assert.deepEqual(
      theirs.payments.map((p) => [p.purpose, p.day]),
      [
        ['new_business', '2025-06-05'],
        ['statement', '2025-07-01'],
      ],
    );
    assert.equal(toPence(theirs.totals.collected), 7000 + toPence(theirs.payments[1]!.amount));

    const production = await reportJson({ environment: 'production' });
    assert.deepEqual(production.payments, []);
    assert.ok(TOTAL_KEYS.every((k) => production.totals[k] === 0));

    // One London day: 10 June only (23:00Z on the 9th is already the 10th in London in summer).
    const tenth = await reportJson({ from: '2025-06-10', to: '2025-06-10' });
    assert.ok(tenth.payments.length > 0);
    assert.ok(tenth.payments.every((p) => p.day === '2025-06-10'));
    assert.deepEqual(
      tenth.days.map((d) => d.day),
      ['2025-06-10'],
    );
    const quiet = await reportJson({ from: '2025-08-01', to: '2025-08-31' });
    assert.equal(quiet.payments.length, 0);
    assert.equal(quiet.days.length, 31);
  });

  test('roles: operations and admin may read it, a viewer may not (403), nobody without a key (401)', async () => {
    const operations = await signInStaff(t, `ops.${String(Date.now())}@milepost.test`, 'operations');
    const viewer = await signInStaff(t, `viewer.${String(Date.now())}@milepost.test`, 'viewer');
    assert.equal((await report({}, { cookie: operations.cookie })).statusCode, 200);
    const refused = await report({}, { cookie: viewer.cookie });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(String(refused.headers['content-type']), /problem\+json/);
    assert.equal((await report({}, {})).statusCode, 401);
    assert.equal((await report({}, { authorization: 'Bearer wrong' })).statusCode, 401);
  });

  test('bad input: 422 for dates and parameters, 404 for an unknown company', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ from: '2025-02-30' }, 422, '/querystring/from'],
      [{ to: '2025-13-01' }, 422, '/querystring/to'],
      [{ from: '2025-07-02', to: '2025-07-01' }, 422, '/querystring/to'],
      [{ from: '2025-01-01', to: '2026-01-02' }, 422, '/querystring/to'],
      [{ from: 'yesterday' }, 422, '/querystring/from'],
      [{ format: 'xml' }, 422, '/querystring/format'],
      [{ part: 'everything' }, 422, '/querystring/part'],
      [{ environment: 'mock' }, 422, '/querystring/environment'],
      [{ colour: 'red' }, 422, '/querystring/colour'],
      [{ company_reference: 'no-such-company' }, 404, ''],
    ];
    for (const [query, status, path] of cases) {
      const r = await report(query);
      assert.equal(r.statusCode, status, `${JSON.stringify(query)}: ${r.body}`);
      assert.match(String(r.headers['content-type']), /application\/problem\+json/);
      if (path !== '')
        assert.ok(
          r.json<{ errors: Array<{ path: string }> }>().errors.some((e) => e.path === path),
          `${JSON.stringify(query)}: ${r.body}`,
        );
    }
    const missing = await t.app.inject({
      url: '/admin/reports/cash?environment=sandbox&from=2025-06-01&to=2025-06-30',
      headers: t.adminHeaders,
    });
    assert.equal(missing.statusCode, 422, missing.body);
    // A full leap year is allowed.
    assert.equal((await report({ from: '2024-01-01', to: '2024-12-31' })).statusCode, 200);
    // The last day a date can name ends the range (the day after it has no YYYY-MM-DD form).
    const last = await report({ from: '9999-12-31', to: '9999-12-31' });
    assert.equal(last.statusCode, 200, last.body);
  });
});
