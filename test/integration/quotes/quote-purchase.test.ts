import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { signInStaff } from '../staff/staff-support.ts';
import { postQuote, quoteInput, rateBookFor, type Problem, type Quote } from './quote-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

interface Bound {
  status: 'bound';
  policy_reference: string;
  user_reference: string;
  amount_paid: number;
  sign_in: { type: string; username: string };
}
interface Action {
  status: 'requires_action';
  payment_intent: string;
  client_secret: string;
  payment_method: string;
  amount: number;
}

const clock = fixedClock('2025-05-20T12:00:00Z');
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let t: TestApp;
let acme: Company;
let other: Company;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ listen: true, env: { SMTP_URL: smtp.url }, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await rateBookFor(t, acme, ada, bob);
});
after(async () => {
  await t.close();
  await smtp.close();
});

const publicHeaders = (company: Company) => ({ client_id: company.client_id, environment: 'sandbox' });
const codeOf = (body: string): string => (JSON.parse(body) as Problem).code;

/** The purchase secret each public quote was answered with, by reference. */
const secrets = new Map<string, string>();

/** A public quote on `plan`, as the web app asks for it; its secret remembered for `purchase`. */
async function publicQuote(plan: 'single' | 'monthly', change: Parameters<typeof quoteInput>[0] = () => {}) {
  const input = quoteInput((q) => {
    (q as { installment_plan: string }).installment_plan = plan;
    change(q);
  });
  const quote = (await postQuote(t, publicHeaders(acme), input)).json<Quote & { purchase_secret?: string }>();
  assert.ok(quote.purchase_secret !== undefined);
  secrets.set(quote.quote_reference, quote.purchase_secret);
  return { input, quote };
}

/** A public quote on the single plan (a payment at binding). */
const singleQuote = (change: Parameters<typeof quoteInput>[0] = () => {}) => publicQuote('single', change);

/** The web app's purchase: the client id alone, with the quote's secret unless `secret` says otherwise. */
const purchase = (
  reference: string,
  paymentMethodId: string,
  company: Company = acme,
  extra: object = {},
  secret: string | null | undefined = secrets.get(reference),
) =>
  t.app.inject({
    method: 'POST',
    url: `/quotes/${reference}/purchase`,
    headers: {
      ...publicHeaders(company),
      ...(secret === null || secret === undefined ? {} : { purchase_secret: secret }),
    },
    payload: { payment_method_id: paymentMethodId, ...extra },
  });

/** How many objects of a type the payment sandbox holds (customers, payment intents…). */
const sandboxCount = async (type: string): Promise<number> =>
  Number(
    (
      await sql<{
        count: string;
      }>`select count(*) as count from stripe_sandbox_objects where type = ${type}`.execute(
        t.container.database.db,
      )
    ).rows[0]?.count,
  );

const policyOf = (reference: string) =>
  t.app.inject({ method: 'GET', url: `/policys/${reference}`, headers: acme.sandbox });

const paymentsOf = async (reference: string) =>
  (await policyOf(reference)).json<{
    payments: Array<{ status: string; amount: number; provider_payment_reference?: string }>;
  }>().payments;

test('a bought quote is paid, then bound as POST /policys binds it; the welcome email and a first login follow', async () => {
  const { input, quote } = await singleQuote();
  const answer = await purchase(quote.quote_reference, 'pm_card_visa', acme, { installment_plan: 'single' });
  assert.equal(answer.statusCode, 201, answer.body);
  const bound = answer.json<Bound>();
  assert.equal(bound.amount_paid, quote.pricing.upfront_premium);
  assert.ok(quote.pricing.upfront_premium > 0);
  const policy = (await policyOf(bound.policy_reference)).json<{
    pricing: { quote_reference: string; upfront_premium: number };
    user_reference: string;
  }>();
  assert.equal(policy.pricing.quote_reference, quote.quote_reference);
  assert.equal(policy.user_reference, bound.user_reference);
  const payments = await paymentsOf(bound.policy_reference);
  assert.deepEqual(
    payments.map((p) => [p.status, p.amount]),
    [['succeeded', quote.pricing.upfront_premium]],
  );
  const read = (
    await t.app.inject({ method: 'GET', url: `/quotes/${quote.quote_reference}`, headers: acme.sandbox })
  ).json<Quote>();
  assert.equal(read.status, 'bound');
  const [queued] = await t.container.services.notifications.emailsTo(input.proposer.email);
  assert.equal(queued?.template, 'welcome');
  await t.container.services.notifications.deliver([queued.id], 0);
  const [welcome] = await smtp.waitFor(input.proposer.email);
  assert.match(welcome?.text ?? '', new RegExp(bound.policy_reference));
  // The buyer signs in as any new policyholder does: with the welcome email's temporary password, then
  // a password of their own.
  assert.deepEqual(bound.sign_in, { type: 'TEMPORARY_PASSWORD_SENT', username: input.proposer.email });
  const temporary = /^Temporary password: (\S+)\r?$/m.exec(welcome?.text ?? '')?.[1];
  assert.ok(temporary !== undefined);
  const first = await t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: publicHeaders(acme),
    payload: { type: 'USER_PASSWORD_AUTH', username: bound.sign_in.username, password: temporary },
  });
  assert.equal(first.json<{ type: string }>().type, 'NEW_PASSWORD_REQUIRED', first.body);
  const chosen = await t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: publicHeaders(acme),
    payload: {
      type: 'NEW_PASSWORD_REQUIRED',
      username: bound.sign_in.username,
      session: first.json<{ session: string }>().session,
      new_password: 'Violet-Harbour-Lamp-42',
    },
  });
  assert.equal(chosen.statusCode, 200, chosen.body);
  const signedIn = await t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: publicHeaders(acme),
    payload: {
      type: 'USER_PASSWORD_AUTH',
      username: bound.sign_in.username,
      password: 'Violet-Harbour-Lamp-42',
    },
  });
  assert.equal(signedIn.json<{ type: string }>().type, 'DONE');
});

test('bought with another’s email, the answer hands over no way in, so that email’s later policies stay its owner’s', async () => {
  const owner = `mailbox.owner.${String(process.pid)}@example.com`;
  // From an address of its own: the file's other purchases have used the throttle of theirs.
  const remoteAddress = '203.0.113.77';
  const input = quoteInput((q) => {
    (q as { installment_plan: string }).installment_plan = 'single';
    (q.proposer as { email: string }).email = owner;
  });
  const asked = await t.app.inject({
    method: 'POST',
    url: '/quotes',
    headers: publicHeaders(acme),
    payload: input,
    remoteAddress,
  });
  assert.equal(asked.statusCode, 201, asked.body);
  const quote = asked.json<Quote & { purchase_secret: string }>();
  const answer = await t.app.inject({
    method: 'POST',
    url: `/quotes/${quote.quote_reference}/purchase`,
    headers: { ...publicHeaders(acme), purchase_secret: quote.purchase_secret },
    payload: { payment_method_id: 'pm_card_visa' },
    remoteAddress,
  });
  assert.equal(answer.statusCode, 201, answer.body);
  // Nothing that sets a password: the account is reached only through the mailbox.
  assert.deepEqual(answer.json<Bound>().sign_in, { type: 'TEMPORARY_PASSWORD_SENT', username: owner });
  // Another policy for that email later joins this account (one per email): whoever bought never held
  // its password, so it stays the mailbox's owner's.
  const account = await t.container.database.db
    .selectFrom('users')
    .select(['password_is_temporary'])
    .where('email', '=', owner)
    .executeTakeFirstOrThrow();
  assert.equal(account.password_is_temporary, true);
});

test('twice: the second purchase answers 409 and charges nothing more', async () => {
  const { quote } = await singleQuote();
  const first = await purchase(quote.quote_reference, 'pm_card_visa');
  assert.equal(first.statusCode, 201, first.body);
  const second = await purchase(quote.quote_reference, 'pm_card_mastercard');
  assert.equal(second.statusCode, 409, second.body);
  assert.equal(codeOf(second.body), 'QUOTE_NOT_BINDABLE');
  assert.equal((await paymentsOf(first.json<Bound>().policy_reference)).length, 1);
});

test('at once with two cards: one purchase binds, the other answers 409; one charge, one policy', async () => {
  const { quote } = await singleQuote();
  const answers = await Promise.all([
    purchase(quote.quote_reference, 'pm_card_visa'),
    purchase(quote.quote_reference, 'pm_card_mastercard'),
  ]);
  assert.deepEqual(
    answers.map((a) => a.statusCode).sort(),
    [201, 409],
    answers.map((a) => a.body).join('\n'),
  );
  const bound = answers.find((a) => a.statusCode === 201)!.json<Bound>();
  const payments = await paymentsOf(bound.policy_reference);
  assert.deepEqual(
    payments.map((p) => [p.status, p.amount]),
    [['succeeded', quote.pricing.upfront_premium]],
  );
  // The quote's one intent, charged once: whichever card confirmed it first paid.
  const intent = payments[0]!.provider_payment_reference!;
  const charged = await t.container.gateways
    .forEnvironment('sandbox', acme.stripe_sandbox_secret_key)
    .retrievePaymentIntent(intent);
  assert.equal(charged.status, 'succeeded');
  assert.equal(charged.amountPence, Math.round(quote.pricing.upfront_premium * 100));
});

test('a declined card answers 402 and makes no policy; another card then buys the same quote with the one intent', async () => {
  const { quote } = await singleQuote();
  const declined = await purchase(quote.quote_reference, 'pm_card_chargeDeclined');
  assert.equal(declined.statusCode, 402, declined.body);
  assert.equal(codeOf(declined.body), 'PAYMENT_DECLINED');
  const read = (
    await t.app.inject({ method: 'GET', url: `/quotes/${quote.quote_reference}`, headers: acme.sandbox })
  ).json<Quote>();
  assert.equal(read.status, 'bindable');
  const paid = await purchase(quote.quote_reference, 'pm_card_visa');
  assert.equal(paid.statusCode, 201, paid.body);
  const payments = await paymentsOf(paid.json<Bound>().policy_reference);
  assert.deepEqual(
    payments.map((p) => p.status),
    ['succeeded'],
  );
});

/** The browser confirms the intent after 3-D Secure with the client secret and no key, as Stripe.js does. */
const confirmAsBrowser = (action: Action) =>
  t.app.inject({
    method: 'POST',
    url: `/sandbox/stripe/v1/payment_intents/${action.payment_intent}/confirm`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `client_secret=${encodeURIComponent(action.client_secret)}&payment_method=${action.payment_method}`,
  });

/** The browser completes 3-D Secure: the intent is paid. */
async function completeThreeDSecure(action: Action): Promise<void> {
  const confirmed = await confirmAsBrowser(action);
  assert.equal(confirmed.statusCode, 200, confirmed.body);
}

test('3-D Secure: 202 with the client secret; once the customer authenticates, the same request binds', async () => {
  const { quote } = await singleQuote();
  const asked = await purchase(quote.quote_reference, 'pm_card_authenticationRequired');
  assert.equal(asked.statusCode, 202, asked.body);
  const action = asked.json<Action>();
  assert.equal(action.amount, quote.pricing.upfront_premium);
  // Sent again before authenticating, it still waits: the server never authenticates for the customer.
  const again = await purchase(quote.quote_reference, 'pm_card_authenticationRequired');
  assert.equal(again.statusCode, 202, again.body);
  await completeThreeDSecure(action);
  const bound = await purchase(quote.quote_reference, 'pm_card_authenticationRequired');
  assert.equal(bound.statusCode, 201, bound.body);
});

test('a quote that is not bindable answers 409 before any payment; another plan than the quote’s 422', async () => {
  const { quote: declined } = await singleQuote((q) => {
    (q.vehicle as { group_rating_50: number }).group_rating_50 = 46;
  });
  const refused = await purchase(declined.quote_reference, 'pm_card_visa');
  assert.equal(refused.statusCode, 409, refused.body);
  assert.equal(codeOf(refused.body), 'QUOTE_NOT_BINDABLE');
  const { quote: referred } = await singleQuote((q) => {
    (q.vehicle as { is_import: boolean }).is_import = true;
  });
  assert.equal((await purchase(referred.quote_reference, 'pm_card_visa')).statusCode, 409);
  const { quote } = await singleQuote();
  const otherPlan = await purchase(quote.quote_reference, 'pm_card_visa', acme, {
    installment_plan: 'monthly',
  });
  assert.equal(otherPlan.statusCode, 422, otherPlan.body);
  assert.match(otherPlan.body, /installment_plan/);
});

test('a monthly plan: the first installment is paid at purchase and recorded on the policy as paid', async () => {
  const { quote } = await publicQuote('monthly');
  const installment = quote.pricing['subscription_premium'] as number;
  assert.equal(quote.pricing['subscription_installments'], 12);
  assert.equal(quote.pricing.upfront_premium, 0);
  const answer = await purchase(quote.quote_reference, 'pm_card_visa', acme, { installment_plan: 'monthly' });
  assert.equal(answer.statusCode, 201, answer.body);
  const bound = answer.json<Bound>();
  // The example rate book prices no deposit: the first payment is the first installment alone.
  assert.equal(quote.pricing['deposit_fee'], 0);
  assert.equal(bound.amount_paid, installment);
  assert.deepEqual(
    (await paymentsOf(bound.policy_reference)).map((p) => [p.status, p.amount]),
    [['succeeded', installment]],
  );
  const row = await t.container.database.db
    .selectFrom('policies')
    .select('prepaid_installments')
    .where('policy_reference', '=', bound.policy_reference)
    .executeTakeFirstOrThrow();
  assert.equal(row.prepaid_installments, 1);
  // The first statement, over the first month, bills no installment: the one due then was paid.
  clock.set('2025-07-01T02:00:00Z');
  try {
    const statement = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: {
        policy_reference: bound.policy_reference,
        effective_date: Date.parse('2025-06-30T22:59:59Z') / 1000,
      },
    });
    assert.equal(statement.statusCode, 201, statement.body);
    assert.equal(statement.json<{ subscription_installments: number }>().subscription_installments, 0);
  } finally {
    clock.set('2025-05-20T12:00:00Z');
  }
});

test('a first payment below the smallest card payment (30p) answers 422 before the processor is asked', async () => {
  const { quote } = await publicQuote('monthly');
  // A rate book can price a monthly installment of a few pence; the stored quote is made to say 21p.
  await sql`update quotes set pricing = jsonb_set(pricing::jsonb, '{subscription_premium}', '0.21')::json
    where quote_reference = ${quote.quote_reference}`.execute(t.container.database.db);
  const customersBefore = await sandboxCount('customer');
  const answer = await purchase(quote.quote_reference, 'pm_card_visa', acme, { installment_plan: 'monthly' });
  assert.equal(answer.statusCode, 422, answer.body);
  assert.match(answer.body, /£0\.21, is below the smallest card payment, £0\.30/);
  assert.equal(await sandboxCount('customer'), customersBefore, 'no customer made at the processor');
});

test('validation and tenancy: a bad card id 422; another company’s quote 404', async () => {
  const { quote } = await singleQuote();
  const bad = await purchase(quote.quote_reference, '4242424242424242');
  assert.equal(bad.statusCode, 422, bad.body);
  const elsewhere = await purchase(quote.quote_reference, 'pm_card_visa', other);
  assert.equal(elsewhere.statusCode, 404, elsewhere.body);
  const unknown = await purchase('00000000-0000-4000-8000-000000000000', 'pm_card_visa');
  assert.equal(unknown.statusCode, 404, unknown.body);
});

test('the purchase secret: without it, or with another quote’s, a quote is not found; a server buys without it', async () => {
  const { quote } = await singleQuote();
  const { quote: another } = await singleQuote();
  const read = (reference: string, headers: Record<string, string>) =>
    t.app.inject({ url: `/quotes/${reference}`, headers });
  // Read back by the web app: with its secret, as the quote's answer showed it (no input).
  const mine = await read(quote.quote_reference, {
    ...publicHeaders(acme),
    purchase_secret: secrets.get(quote.quote_reference)!,
  });
  assert.equal(mine.statusCode, 200, mine.body);
  assert.equal(mine.json<Quote>().input, undefined);
  assert.equal(mine.json<{ purchase_secret?: string }>().purchase_secret, undefined, 'told only once');
  for (const headers of [
    publicHeaders(acme),
    { ...publicHeaders(acme), purchase_secret: secrets.get(another.quote_reference)! },
    { ...publicHeaders(acme), purchase_secret: 'x'.repeat(43) },
    { ...publicHeaders(other), purchase_secret: secrets.get(quote.quote_reference)! },
  ]) {
    const answer = await read(quote.quote_reference, headers);
    assert.equal(answer.statusCode, 404, answer.body);
  }
  // A guessed reference with a guessed secret is answered as a wrong secret is.
  const guessed = await read('00000000-0000-4000-8000-000000000000', {
    ...publicHeaders(acme),
    purchase_secret: 'x'.repeat(43),
  });
  assert.equal(guessed.statusCode, 404, guessed.body);
  const wrongSecret = await read(quote.quote_reference, publicHeaders(acme));
  const { request_id: _a, ...guessedProblem } = guessed.json<Problem & { request_id?: string }>();
  const { request_id: _b, ...wrongProblem } = wrongSecret.json<Problem & { request_id?: string }>();
  assert.deepEqual(guessedProblem, wrongProblem);

  const missing = await purchase(quote.quote_reference, 'pm_card_visa', acme, {}, null);
  assert.equal(missing.statusCode, 404, missing.body);
  const wrong = await purchase(
    quote.quote_reference,
    'pm_card_visa',
    acme,
    {},
    secrets.get(another.quote_reference),
  );
  assert.equal(wrong.statusCode, 404, wrong.body);
  const elsewhere = await purchase(quote.quote_reference, 'pm_card_visa', other);
  assert.equal(elsewhere.statusCode, 404, elsewhere.body);
  // Nothing was charged: the quote is still for sale, and its owner buys it.
  assert.equal((await read(quote.quote_reference, acme.sandbox)).json<Quote>().status, 'bindable');
  const bought = await purchase(quote.quote_reference, 'pm_card_visa');
  assert.equal(bought.statusCode, 201, bought.body);

  // The company's integration asks and buys with its client credentials, and gets no secret.
  const serverQuote = (await postQuote(t, acme.sandbox, quoteInput())).json<
    Quote & { purchase_secret?: string }
  >();
  assert.equal(serverQuote.purchase_secret, undefined);
  const byServer = await t.app.inject({
    method: 'POST',
    url: `/quotes/${serverQuote.quote_reference}/purchase`,
    headers: acme.sandbox,
    payload: { payment_method_id: 'pm_card_visa' },
  });
  assert.equal(byServer.statusCode, 201, byServer.body);
  // Its quote cannot be read or bought with the client id alone: it has no secret to present.
  assert.equal((await read(serverQuote.quote_reference, publicHeaders(acme))).statusCode, 404);
});

describe('new cover is never backdated', () => {
  // The clock is 13:00 on 20 May 2025 in London; the day began at 23:00 UTC on the 19th.
  const midnightOf = (day: string) => Date.parse(`${day}T23:00:00Z`) / 1000;
  const yearFrom = (start: number) => (q: { policy: object }) => {
    Object.assign(q.policy, { start_date: start, end_date: start + 365 * 86_400 - 1 });
  };

  // From an address of its own: the file's other purchases have used the throttle of theirs.
  const buy = (reference: string) =>
    t.app.inject({
      method: 'POST',
      url: `/quotes/${reference}/purchase`,
      headers: { ...publicHeaders(acme), purchase_secret: secrets.get(reference) ?? '' },
      payload: { payment_method_id: 'pm_card_visa' },
      remoteAddress: '203.0.113.78',
    });

  test('a quote for today is bought from the moment it is paid, not from the day’s start', async () => {
    const { quote } = await singleQuote(yearFrom(midnightOf('2025-05-19')));
    const answer = await buy(quote.quote_reference);
    assert.equal(answer.statusCode, 201, answer.body);
    const { policy } = (await policyOf(answer.json<Bound>().policy_reference)).json<{
      policy: { start_date: number; end_date: number };
    }>();
    assert.equal(policy.start_date, clock.now().getTime() / 1000);
    assert.equal(policy.end_date, midnightOf('2026-05-19') - 1);
  });

  test('a quote for a day that has passed answers 422; one whose start day passed unbought is not sold', async () => {
    const yesterday = await postQuote(
      t,
      publicHeaders(acme),
      quoteInput(yearFrom(midnightOf('2025-05-18'))),
      422,
    );
    assert.deepEqual(
      yesterday.json<Problem>().errors?.map((e) => e.path),
      ['/body/policy/start_date'],
    );
    const { quote } = await singleQuote(yearFrom(midnightOf('2025-05-20')));
    const intents = await sandboxCount('payment_intent');
    clock.set('2025-05-22T09:00:00Z');
    try {
      const answer = await buy(quote.quote_reference);
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(codeOf(answer.body), 'QUOTE_NOT_BINDABLE');
      assert.match(answer.body, /start on a day that has passed/);
      assert.equal(await sandboxCount('payment_intent'), intents, 'nothing is charged');
      const shown = await t.app.inject({
        method: 'GET',
        url: `/quotes/${quote.quote_reference}`,
        headers: acme.sandbox,
      });
      assert.equal(shown.json<Quote>().status, 'expired');
    } finally {
      clock.set('2025-05-20T12:00:00Z');
    }
  });
});

describe('a buyer who paid and never came back', () => {
  // From an address of its own: the file's other purchases have used the throttle of theirs.
  const buy = (reference: string, paymentMethodId: string) =>
    t.app.inject({
      method: 'POST',
      url: `/quotes/${reference}/purchase`,
      headers: { ...publicHeaders(acme), purchase_secret: secrets.get(reference) ?? '' },
      payload: { payment_method_id: paymentMethodId },
      remoteAddress: '203.0.113.79',
    });

  /** A quote paid through 3-D Secure in the browser, the purchase never sent again: its reference. */
  async function paidAndLeft(): Promise<Quote> {
    const { quote } = await singleQuote();
    const asked = await buy(quote.quote_reference, 'pm_card_authenticationRequired');
    assert.equal(asked.statusCode, 202, asked.body);
    const action = asked.json<Action>();
    await completeThreeDSecure(action);
    return quote;
  }

  const purchaseStatus = async (quote: Quote) =>
    (
      await sql<{ status: string }>`select p.status from quote_purchases p join quotes q on q.id = p.quote_id
        where q.quote_reference = ${quote.quote_reference}`.execute(t.container.database.db)
    ).rows[0]?.status;
  const settle = () => t.container.services.quotePurchases.settleLeft();
  const at = async (time: string, run: () => Promise<void>) => {
    clock.set(time);
    try {
      await run();
    } finally {
      clock.set('2025-05-20T12:00:00Z');
    }
  };

  test('the settling job binds the paid quote after 15 minutes: the policy and its welcome email', async () => {
    const quote = await paidAndLeft();
    await at('2025-05-20T12:14:00Z', async () => {
      assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 0 }, 'not before 15 minutes');
    });
    await at('2025-05-20T12:16:00Z', async () => {
      assert.deepEqual(await settle(), { bound: 1, refunded: 0, cancelled: 0 });
    });
    assert.equal(await purchaseStatus(quote), 'bound');
    const shown = await t.app.inject({
      method: 'GET',
      url: `/quotes/${quote.quote_reference}`,
      headers: acme.sandbox,
    });
    assert.equal(shown.json<Quote>().status, 'bound');
    const emails = await t.container.services.notifications.emailsTo(
      shown.json<Quote & { input: { proposer: { email: string } } }>().input.proposer.email,
    );
    assert.ok(emails.length > 0, 'the buyer is told how to sign in');
    // Its buyer back later is told it is bound, and nothing more is charged.
    assert.equal((await buy(quote.quote_reference, 'pm_card_visa')).statusCode, 409);
    assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 0 });
  });

  test('a paid quote that no longer binds is refunded: by the job, or at once when its buyer comes back', async () => {
    const refunds = await sandboxCount('refund');
    const left = await paidAndLeft();
    const back = await paidAndLeft();
    // A month on: both quotes have expired (and their start day passed).
    await at('2025-06-21T12:00:00Z', async () => {
      const answer = await buy(back.quote_reference, 'pm_card_visa');
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(codeOf(answer.body), 'QUOTE_NOT_BINDABLE');
      assert.equal(await purchaseStatus(back), 'refunded');
      assert.deepEqual(await settle(), { bound: 0, refunded: 1, cancelled: 0 });
      assert.equal(await purchaseStatus(left), 'refunded');
      assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 0 }, 'each refunded once');
    });
    assert.equal(await sandboxCount('refund'), refunds + 2);
  });

  test('an intent never paid is looked at again while its quote binds, then cancelled: it pays no more', async () => {
    const { quote } = await singleQuote();
    const asked = await buy(quote.quote_reference, 'pm_card_authenticationRequired');
    assert.equal(asked.statusCode, 202);
    await at('2025-05-20T12:30:00Z', async () => {
      assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 0 });
    });
    assert.equal(await purchaseStatus(quote), 'paying');
    // A month on the quote has expired: the intent is cancelled at the processor, and the buyer's tab,
    // still open on 3-D Secure, can no longer pay for a policy that cannot be bound.
    await at('2025-06-21T12:00:00Z', async () => {
      assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 1 });
      assert.equal(await purchaseStatus(quote), 'cancelled');
      const late = await confirmAsBrowser(asked.json<Action>());
      assert.equal(late.statusCode, 400, late.body);
      assert.deepEqual(await settle(), { bound: 0, refunded: 0, cancelled: 0 }, 'cancelled once');
      const back = await buy(quote.quote_reference, 'pm_card_visa');
      assert.equal(codeOf(back.body), 'QUOTE_NOT_BINDABLE');
    });
  });
});

test('purchases are throttled per address as POST /quotes is: 20, then 429 with Retry-After', async () => {
  const lone = await createCompany(t.app, 'Lone');
  for (let i = 0; i < 20; i++) {
    const answer = await purchase('00000000-0000-4000-8000-000000000000', 'pm_card_visa', lone);
    assert.equal(answer.statusCode, 404, answer.body);
  }
  const throttled = await purchase('00000000-0000-4000-8000-000000000000', 'pm_card_visa', lone);
  assert.equal(throttled.statusCode, 429, throttled.body);
  assert.ok(Number(throttled.headers['retry-after']) >= 1);
});
