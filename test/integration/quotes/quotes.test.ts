import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { exampleRateBookContent, make as rating } from '../rating/rate-book-support.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import {
  bindingPolicy,
  postQuote,
  quoteInput,
  rateBookFor,
  type Problem,
  type Quote,
} from './quote-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

const NOW = '2025-05-20T12:00:00Z';
const DAY_MS = 86_400_000;
const clock = fixedClock(NOW);
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let t: TestApp;
let acme: Company;
let other: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;
let olly: SignedInStaff;
let val: SignedInStaff;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  olly = await signInStaff(t, 'olly@insurer.example', 'operations');
  val = await signInStaff(t, 'val@insurer.example', 'viewer');
  await rateBookFor(t, acme, ada, bob);
});
after(async () => {
  await t.close();
  await smtp.close();
});

const publicHeaders = (company: Company) => ({ client_id: company.client_id, environment: 'sandbox' });
const paths = (body: string): string[] => (JSON.parse(body) as Problem).errors?.map((e) => e.path) ?? [];
const codeOf = (body: string): string => (JSON.parse(body) as Problem).code;

async function newQuote(input = quoteInput()): Promise<Quote> {
  return (await postQuote(t, acme.sandbox, input)).json<Quote>();
}

const bind = (payload: object, company: Company = acme) =>
  t.app.inject({ method: 'POST', url: '/policys', headers: company.sandbox, payload });

const getQuote = (reference: string, company: Company = acme) =>
  t.app.inject({ method: 'GET', url: `/quotes/${reference}`, headers: company.sandbox });

describe('POST /quotes and GET /quotes/:quote_reference', () => {
  test('a quote is rated on the version in force, stored with its breakdown, decided, and read back', async () => {
    const answer = await postQuote(t, acme.sandbox, quoteInput());
    const quote = answer.json<Quote>();
    assert.equal(answer.headers['location'], `/quotes/${quote.quote_reference}`);
    assert.match(quote.quote_reference, /^[0-9a-f-]{36}$/);
    assert.match(quote.quote_version_reference, /^[0-9a-f-]{36}$/);
    assert.equal(quote.pricing['quote_reference'], quote.quote_reference);
    assert.equal(quote.pricing['quote_model_reference'], quote.quote_model_reference);
    assert.deepEqual([quote.rate_book_reference, quote.rate_book_version], ['car-rates', 1]);
    for (const field of [
      'base_premium',
      'yearly_premium_estimate',
      'ipt_rate',
      'commission_rate',
      'admin_fee',
    ])
      assert.equal(typeof quote.pricing[field], 'number', field);
    assert.deepEqual(quote.decision, { outcome: 'accept', reasons: [] });
    assert.equal(quote.status, 'bindable');
    assert.equal(quote.referral, null);
    assert.equal(new Date(quote.expires_at).getTime() - new Date(quote.created_at).getTime(), 30 * DAY_MS);
    assert.ok(
      quote.breakdown.factors.some((f) => !f.customer_visible),
      'the integration sees every factor',
    );
    assert.ok(quote.input !== undefined);

    const read = await getQuote(quote.quote_reference);
    assert.equal(read.statusCode, 200, read.body);
    assert.deepEqual(read.json(), quote);
    // Several quotes for one applicant are independent rows.
    const again = await newQuote();
    assert.notEqual(again.quote_reference, quote.quote_reference);
  });

  test('with the client id alone the customer sees the factors the insurer shows, and no input', async () => {
    const quote = (await postQuote(t, publicHeaders(acme), quoteInput())).json<Quote>();
    assert.ok(quote.breakdown.factors.length > 0);
    assert.ok(quote.breakdown.factors.every((f) => f.customer_visible));
    assert.equal(quote.input, undefined);
    // Reading it back with the client id alone needs its purchase secret: without it, it is not found.
    const read = await t.app.inject({
      method: 'GET',
      url: `/quotes/${quote.quote_reference}`,
      headers: publicHeaders(acme),
    });
    assert.equal(read.statusCode, 404, read.body);
  });

  test('a blank client_secret is the client id alone: the customer’s view, a secret to read back, the throttle', async () => {
    const lone = await createCompany(t.app, 'Blank Secret');
    for (const blank of ['', ' ', '\t']) {
      const headers = { ...publicHeaders(acme), client_secret: blank };
      const quote = (await postQuote(t, headers, quoteInput())).json<Quote & { purchase_secret?: string }>();
      assert.ok(
        quote.breakdown.factors.every((f) => f.customer_visible),
        'only the factors shown',
      );
      assert.equal(quote.input, undefined);
      assert.ok(quote.purchase_secret !== undefined);
      // Another visitor's quote, known by its reference only, is not read with a blank secret.
      const server = await newQuote();
      const read = await t.app.inject({ method: 'GET', url: `/quotes/${server.quote_reference}`, headers });
      assert.equal(read.statusCode, 404, read.body);
      const bought = await t.app.inject({
        method: 'POST',
        url: `/quotes/${server.quote_reference}/purchase`,
        headers,
        payload: { payment_method_id: 'pm_card_visa' },
      });
      assert.equal(bought.statusCode, 404, bought.body);
      // Nor does it tell whether a policy exists.
      const unknownPolicy = quoteInput((q) => {
        (q.policy as { policy_reference: string }).policy_reference = 'no-such-policy';
      });
      assert.deepEqual(paths((await postQuote(t, headers, unknownPolicy, 422)).body), [
        '/body/policy/policy_reference',
      ]);
    }
    for (let i = 0; i < 20; i++)
      await postQuote(t, { ...publicHeaders(lone), client_secret: ' ' }, quoteInput(), 422);
    await postQuote(t, { ...publicHeaders(lone), client_secret: ' ' }, quoteInput(), 429);
  });

  test('public quotes are throttled per address as logins are: 20, then 429 with Retry-After', async () => {
    const lone = await createCompany(t.app, 'Lone');
    for (let i = 0; i < 20; i++) {
      const answer = await postQuote(t, publicHeaders(lone), quoteInput(), 422);
      assert.equal(codeOf(answer.body), 'UNKNOWN_PRODUCT');
    }
    const throttled = await postQuote(t, publicHeaders(lone), quoteInput(), 429);
    assert.ok(Number(throttled.headers['retry-after']) >= 1);
    // The company's integration is not throttled.
    await postQuote(t, lone.sandbox, quoteInput(), 422);
  });

  test('validation: schema, rating needs, product and rate book each answer 422 naming the field', async () => {
    const noDob = quoteInput((q) => {
      delete (q.proposer as { dob?: string }).dob;
    });
    assert.ok(paths((await postQuote(t, acme.sandbox, noDob, 422)).body).includes('/body/proposer/dob'));
    const withPricing = {
      ...quoteInput(),
      pricing: { usage_rate: 1, upfront_premium: 1, subscription_premium: 1 },
    };
    assert.ok(paths((await postQuote(t, acme.sandbox, withPricing, 422)).body).length > 0);
    const noMileage = quoteInput((q) => {
      delete (q.vehicle as { estimated_yearly_mileage?: number }).estimated_yearly_mileage;
    });
    const unrated = await postQuote(t, acme.sandbox, noMileage, 422);
    assert.ok(paths(unrated.body).includes('/body/vehicle/estimated_yearly_mileage'), unrated.body);
    const unknown = await postQuote(
      t,
      acme.sandbox,
      quoteInput((q) => {
        (q.policy as { product_reference: string }).product_reference = 'no-such-product';
      }),
      422,
    );
    assert.equal(codeOf(unknown.body), 'UNKNOWN_PRODUCT');
    await rating.product(t, acme.sandbox, 'unrated-product');
    const unratedProduct = await postQuote(
      t,
      acme.sandbox,
      quoteInput((q) => {
        (q.policy as { product_reference: string }).product_reference = 'unrated-product';
      }),
      422,
    );
    assert.equal(codeOf(unratedProduct.body), 'NO_RATE_BOOK');
    const unknownPolicy = quoteInput((q) => {
      (q.policy as { policy_reference: string }).policy_reference = 'no-such-policy';
    });
    await postQuote(t, acme.sandbox, unknownPolicy, 404);
  });

  test('a version pricing beyond what a policy takes answers 422 naming the field, never a price with nulls', async () => {
    const as = (staff: SignedInStaff) => ({
      ...staff.headers,
      client_id: acme.client_id,
      environment: 'sandbox',
    });
    const content = exampleRateBookContent();
    await rating.rateBook(t, acme.sandbox, 'dear-miles', 'dear-rates');
    // Validation takes a base rate of 1000 a mile; with the factors and IPT it prices usage at £3049.20.
    await rating.approvedVersion(t, 'dear-rates', as(ada), as(bob), {
      ...content,
      base_rate_per_unit: '1000',
    });
    const quoted = (product: string, mileage?: number) =>
      quoteInput((q) => {
        (q.policy as { product_reference: string }).product_reference = product;
        if (mileage !== undefined)
          (q.vehicle as { estimated_yearly_mileage: number }).estimated_yearly_mileage = mileage;
      });
    const dear = await postQuote(t, acme.sandbox, quoted('dear-miles'), 422);
    const problem = JSON.parse(dear.body) as Problem;
    assert.equal(problem.code, 'VALIDATION_FAILED');
    assert.deepEqual(problem.errors, [
      {
        path: '/body/policy/product_reference',
        message:
          'has a rate book that prices usage at £3049.2000 a mile with IPT, more than a policy takes (usage_rate at most 1000)',
      },
    ]);
    // A rate a policy takes, over a distance that makes the usage premium more than a policy takes.
    await rating.rateBook(t, acme.sandbox, 'far-miles', 'far-rates');
    await rating.approvedVersion(t, 'far-rates', as(ada), as(bob), { ...content, base_rate_per_unit: '300' });
    assert.deepEqual(paths((await postQuote(t, acme.sandbox, quoted('far-miles', 1_000_000), 422)).body), [
      '/body/vehicle/estimated_yearly_mileage',
    ]);
    const near = (await postQuote(t, acme.sandbox, quoted('far-miles'))).json<Quote>();
    for (const value of Object.values(near.pricing)) assert.notEqual(value, null);
    assert.ok(near.pricing.usage_rate <= 1000);
  });

  test('another company’s quote is not found', async () => {
    const quote = await newQuote();
    assert.equal((await getQuote(quote.quote_reference, other)).statusCode, 404);
    assert.equal((await getQuote('00000000-0000-4000-8000-000000000000')).statusCode, 404);
    // Another company has no rate book for its product: its quote is refused, not rated on Acme's.
    await rating.product(t, other.sandbox, 'pay-by-mile-car');
    assert.equal(codeOf((await postQuote(t, other.sandbox, quoteInput(), 422)).body), 'NO_RATE_BOOK');
  });

  test('underwriting: a group above 45 is declined, an import is referred, each with its reason', async () => {
    const declined = await newQuote(
      quoteInput((q) => {
        (q.vehicle as { group_rating_50: number }).group_rating_50 = 46;
      }),
    );
    assert.equal(declined.decision.outcome, 'decline');
    assert.match(declined.decision.reasons[0]?.reason ?? '', /group 45/);
    assert.equal(declined.status, 'declined');
    const referred = await newQuote(
      quoteInput((q) => {
        (q.vehicle as { is_import: boolean }).is_import = true;
      }),
    );
    assert.equal(referred.decision.outcome, 'refer');
    assert.equal(referred.status, 'referred');
    assert.deepEqual(referred.referral, {
      status: 'pending',
      reason: null,
      decided_by: null,
      decided_at: null,
    });
  });
});

describe('binding a quote with POST /policys', () => {
  test('the policy takes the quote’s whole pricing; the quote binds once', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const created = await bind(bindingPolicy(input, quote));
    assert.equal(created.statusCode, 201, created.body);
    const policy = created.json<{
      pricing: Record<string, unknown>;
      versions: Array<{ quote_reference?: string }>;
    }>();
    assert.deepEqual(policy.pricing, quote.pricing);
    assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'bound');
    const twice = await bind(bindingPolicy(input, quote));
    assert.equal(twice.statusCode, 409, twice.body);
    assert.equal(codeOf(twice.body), 'QUOTE_NOT_BINDABLE');
  });

  test('a pricing that differs from the quote’s answers 422 naming each field', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const answer = await bind(
      bindingPolicy(input, quote, { upfront_premium: quote.pricing.upfront_premium + 1, ipt_rate: 5 }),
    );
    assert.equal(answer.statusCode, 422, answer.body);
    assert.equal(codeOf(answer.body), 'QUOTE_PRICING_MISMATCH');
    assert.deepEqual(paths(answer.body).sort(), ['/body/pricing/ipt_rate', '/body/pricing/upfront_premium']);
    assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'bindable');
  });

  test('declined, referred-not-approved and expired quotes answer 409', async () => {
    const declinedInput = quoteInput((q) => {
      (q.vehicle as { group_rating_50: number }).group_rating_50 = 46;
    });
    const declined = await newQuote(declinedInput);
    const referredInput = quoteInput((q) => {
      (q.vehicle as { is_import: boolean }).is_import = true;
    });
    const referred = await newQuote(referredInput);
    const expiringInput = quoteInput();
    const expiring = await newQuote(expiringInput);
    for (const [input, quote] of [
      [declinedInput, declined],
      [referredInput, referred],
    ] as const) {
      const answer = await bind(bindingPolicy(input, quote));
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(codeOf(answer.body), 'QUOTE_NOT_BINDABLE');
    }
    clock.set(new Date(new Date(expiring.expires_at).getTime()));
    try {
      const late = await bind(bindingPolicy(expiringInput, expiring));
      assert.equal(late.statusCode, 409, late.body);
      assert.match(late.body, /expired/);
    } finally {
      clock.set(NOW);
    }
  });

  test('a quote reference that is not one of the company’s is an outside engine’s: kept as sent', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const outside = await bind(bindingPolicy(input, quote), other);
    assert.equal(outside.statusCode, 201, outside.body);
    assert.equal(outside.json<{ pricing: { base_premium?: number } }>().pricing.base_premium, undefined);
    assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'bindable');
  });

  test('two policies racing to bind one quote: one is created, the other answers 409', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const second = structuredClone(input);
    (second.proposer as { email: string }).email = `racer.${quote.quote_reference}@example.com`;
    const answers = await Promise.all([
      bind(bindingPolicy(input, quote)),
      bind(bindingPolicy(second, quote)),
    ]);
    assert.deepEqual(
      answers.map((a) => a.statusCode).sort(),
      [201, 409],
      answers.map((a) => a.body).join('\n'),
    );
  });

  test('an adjustment quote rates the policy it names and binds only in that policy’s adjustment', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const created = await bind(bindingPolicy(input, quote));
    assert.equal(created.statusCode, 201, created.body);
    const reference = created.json<{ policy_reference: string }>().policy_reference;
    const adjustedInput = quoteInput((q) => {
      (q.policy as { policy_reference: string }).policy_reference = reference;
      (q.proposer as { email: string }).email = input.proposer.email;
      (q.vehicle as { estimated_yearly_mileage: number }).estimated_yearly_mileage = 9000;
    });
    const adjustment = await newQuote(adjustedInput);
    assert.equal(adjustment.policy_reference, reference);
    // Not bindable as new business.
    const { policy: block, ...rest } = bindingPolicy(adjustedInput, adjustment);
    const { policy_reference: _ref, ...newBusinessBlock } = block;
    const asNew = await bind({ ...rest, policy: newBusinessBlock });
    assert.equal(asNew.statusCode, 409, asNew.body);
    const adjusted = await bind(bindingPolicy(adjustedInput, adjustment));
    assert.equal(adjusted.statusCode, 200, adjusted.body);
    const policy = adjusted.json<{
      pricing: Record<string, unknown>;
      versions: Array<{ version_type: string }>;
    }>();
    assert.deepEqual(policy.pricing, adjustment.pricing);
    assert.equal(policy.versions.at(-1)?.version_type, 'mta');
  });
});

describe('referrals', () => {
  const staffHeaders = (staff: SignedInStaff) => staff.headers;
  const decide = (
    staff: Record<string, string>,
    reference: string,
    decision: string,
    reason = 'Checked the import papers',
  ) =>
    t.app.inject({
      method: 'POST',
      url: `/admin/referrals/${reference}/decision`,
      headers: staff,
      payload: { company_reference: acme.company_reference, environment: 'sandbox', decision, reason },
    });

  test('the queue lists pending referrals; operations approve with a reason, audited and emailed; then it binds', async () => {
    const input = quoteInput((q) => {
      (q.vehicle as { is_import: boolean }).is_import = true;
    });
    const referred = await newQuote(input);
    const queue = await t.app.inject({
      method: 'GET',
      url: `/admin/referrals?company_reference=${acme.company_reference}&environment=sandbox&limit=200`,
      headers: staffHeaders(val),
    });
    assert.equal(queue.statusCode, 200, queue.body);
    assert.ok(
      queue
        .json<{ referrals: Quote[] }>()
        .referrals.some((q) => q.quote_reference === referred.quote_reference),
    );
    const otherQueue = await t.app.inject({
      method: 'GET',
      url: `/admin/referrals?company_reference=${other.company_reference}&environment=sandbox`,
      headers: staffHeaders(val),
    });
    assert.deepEqual(otherQueue.json(), { referrals: [] });

    assert.equal((await decide(staffHeaders(val), referred.quote_reference, 'approve')).statusCode, 403);
    assert.equal((await decide(t.adminHeaders, referred.quote_reference, 'approve')).statusCode, 403);
    const blank = await decide(staffHeaders(olly), referred.quote_reference, 'approve', '  ');
    assert.equal(blank.statusCode, 422, blank.body);
    const approved = await decide(staffHeaders(olly), referred.quote_reference, 'approve');
    assert.equal(approved.statusCode, 200, approved.body);
    const view = approved.json<Quote>();
    assert.equal(view.status, 'bindable');
    assert.deepEqual(
      { status: view.referral?.status, reason: view.referral?.reason, by: view.referral?.decided_by },
      { status: 'approved', reason: 'Checked the import papers', by: 'staff:olly@insurer.example' },
    );
    assert.equal((await decide(staffHeaders(olly), referred.quote_reference, 'decline')).statusCode, 409);

    const [email] = await t.container.services.notifications.emailsTo(input.proposer.email);
    assert.equal(email?.template, 'quote-referral-approved');
    await t.container.services.notifications.deliver([email.id], 0);
    const [received] = await smtp.waitFor(input.proposer.email);
    assert.match(received?.text ?? '', /Checked the import papers/);
    assert.match(received?.text ?? '', new RegExp(referred.quote_reference));

    const audit = await t.app.inject({
      method: 'GET',
      url: `/admin/audit?actor=staff:olly@insurer.example`,
      headers: t.adminHeaders,
    });
    const records = audit.json<{ data: Array<{ action: string; table: string | null }> }>().data;
    assert.ok(
      records.some((r) => r.action === 'quotes.decideReferral' && r.table === 'quotes'),
      audit.body,
    );

    const bound = await bind(bindingPolicy(input, view));
    assert.equal(bound.statusCode, 201, bound.body);
  });

  test('an approval gives the applicant the whole validity from the decision, even past the quote’s expiry', async () => {
    // Cover from 1 August: the quote's 30 days run out while it waits, its start day still ahead.
    const start = Date.parse('2025-07-31T23:00:00Z') / 1000;
    const referred = await newQuote(
      quoteInput((q) => {
        (q.vehicle as { is_import: boolean }).is_import = true;
        Object.assign(q.policy, { start_date: start, end_date: start + 365 * 86_400 - 1 });
      }),
    );
    const decidedAt = Date.parse(referred.expires_at) + DAY_MS;
    clock.set(new Date(decidedAt));
    try {
      // Signed in then: a session of a month ago has ended.
      const underwriter = await signInStaff(t, 'uma@insurer.example', 'operations');
      const approved = await decide(staffHeaders(underwriter), referred.quote_reference, 'approve');
      assert.equal(approved.statusCode, 200, approved.body);
      const view = approved.json<Quote>();
      assert.equal(view.status, 'bindable');
      assert.equal(Date.parse(view.expires_at), decidedAt + 30 * DAY_MS);
    } finally {
      clock.set(NOW);
    }
  });

  test('a declined referral is emailed with its reason and never binds; another company’s is not found', async () => {
    const input = quoteInput((q) => {
      (q.vehicle as { is_import: boolean }).is_import = true;
    });
    const referred = await newQuote(input);
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: `/admin/referrals/${referred.quote_reference}/decision`,
      headers: olly.headers,
      payload: {
        company_reference: other.company_reference,
        environment: 'sandbox',
        decision: 'approve',
        reason: 'x',
      },
    });
    assert.equal(elsewhere.statusCode, 404, elsewhere.body);
    const declined = await decide(
      olly.headers,
      referred.quote_reference,
      'decline',
      'The import is not road legal',
    );
    assert.equal(declined.statusCode, 200, declined.body);
    assert.equal(declined.json<Quote>().status, 'declined');
    const [email] = await t.container.services.notifications.emailsTo(input.proposer.email);
    assert.equal(email?.template, 'quote-referral-declined');
    assert.match(email.text ?? '', /The import is not road legal/);
    const answer = await bind(bindingPolicy(input, referred));
    assert.equal(answer.statusCode, 409, answer.body);
    // An accepted quote is no referral.
    const accepted = await newQuote();
    assert.equal((await decide(olly.headers, accepted.quote_reference, 'approve')).statusCode, 409);
  });
});

describe('settings and retention', () => {
  const settingsUrl = () => `/admin/companies/${acme.company_reference}/quotes`;

  test('validity and retention are per company: defaults 30 and 90; admins change them', async () => {
    const read = await t.app.inject({ method: 'GET', url: settingsUrl(), headers: t.adminHeaders });
    assert.deepEqual(read.json(), { validity_days: 30, retention_days: 90, quote_page_product: null });
    const put = (headers: Record<string, string>, payload: object) =>
      t.app.inject({ method: 'PUT', url: settingsUrl(), headers, payload });
    assert.equal((await put(olly.headers, { validity_days: 10, retention_days: 60 })).statusCode, 403);
    assert.equal((await put(ada.headers, { validity_days: 0, retention_days: 60 })).statusCode, 422);
    const set = await put(ada.headers, { validity_days: 10, retention_days: 60 });
    assert.equal(set.statusCode, 200, set.body);
    const quote = await newQuote();
    assert.equal(new Date(quote.expires_at).getTime() - new Date(quote.created_at).getTime(), 10 * DAY_MS);
    const missing = await t.app.inject({
      method: 'GET',
      url: '/admin/companies/nope/quotes',
      headers: t.adminHeaders,
    });
    assert.equal(missing.statusCode, 404);
    await put(ada.headers, { validity_days: 30, retention_days: 90 });
  });

  test('the quote page product: a web app quote naming no product is for the one the settings name', async () => {
    const put = (payload: object) =>
      t.app.inject({ method: 'PUT', url: settingsUrl(), headers: ada.headers, payload });
    const unnamed = quoteInput((q) => {
      delete (q.policy as { product_reference?: string }).product_reference;
    });
    // None set: the quote names no product, and the answer says which field is missing.
    const none = await postQuote(t, publicHeaders(acme), unnamed, 422);
    assert.ok(paths(none.body).includes('/body/policy/product_reference'), none.body);
    // A product the company does not have is refused, naming the field, and changes nothing.
    const unknown = await put({ validity_days: 30, retention_days: 90, quote_page_product: 'nope' });
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.deepEqual(paths(unknown.body), ['/body/quote_page_product']);
    const unchanged = await t.app.inject({ method: 'GET', url: settingsUrl(), headers: t.adminHeaders });
    assert.equal(unchanged.json<{ quote_page_product: string | null }>().quote_page_product, null);
    const set = await put({ validity_days: 30, retention_days: 90, quote_page_product: 'pay-by-mile-car' });
    assert.deepEqual(set.json(), {
      validity_days: 30,
      retention_days: 90,
      quote_page_product: 'pay-by-mile-car',
    });
    const quoted = (await postQuote(t, publicHeaders(acme), unnamed)).json<Quote>();
    assert.equal(quoted.rate_book_reference, 'car-rates');
    // The company's integration names its product itself: the page's setting is not its default.
    await postQuote(t, acme.sandbox, unnamed, 422);
    // A PUT that leaves it out keeps it; null clears it.
    const kept = await put({ validity_days: 30, retention_days: 90 });
    assert.equal(kept.json<{ quote_page_product: string | null }>().quote_page_product, 'pay-by-mile-car');
    const cleared = await put({ validity_days: 30, retention_days: 90, quote_page_product: null });
    assert.equal(cleared.json<{ quote_page_product: string | null }>().quote_page_product, null);
    await postQuote(t, publicHeaders(acme), unnamed, 422);
  });

  test('quotes never bound are pseudonymised after the retention; bound ones are kept', async () => {
    const kept = quoteInput();
    const boundQuote = await newQuote(kept);
    assert.equal((await bind(bindingPolicy(kept, boundQuote))).statusCode, 201);
    const unbound = await newQuote();
    const quotes = t.container.services.quotes;
    const early = await quotes.pseudonymiseUnbound(new Date(new Date(NOW).getTime() + 89 * DAY_MS));
    assert.equal(early, 0);
    const later = new Date(new Date(NOW).getTime() + 91 * DAY_MS);
    assert.ok((await quotes.pseudonymiseUnbound(later)) > 0);
    assert.equal(await quotes.pseudonymiseUnbound(later), 0, 'idempotent');
    const gone = (await getQuote(unbound.quote_reference)).json<Quote>();
    assert.equal(gone.pseudonymised, true);
    assert.doesNotMatch(JSON.stringify(gone.input), /applicant\.|Clarke|AB12/);
    assert.deepEqual(gone.pricing, unbound.pricing, 'the price is kept');
    const stillThere = (await getQuote(boundQuote.quote_reference)).json<Quote>();
    assert.equal(stillThere.pseudonymised, false);
  });
});
