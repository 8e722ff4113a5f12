import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';

// A card typed into the web app's sandbox form: created in the built-in sandbox over HTTP as Stripe.js
// would (publishable key, form encoding), then given to the service with ADD_NEW_PAYMENT_METHOD.
type Company = Awaited<ReturnType<typeof createCompany>>;
let t: TestApp;
let base: string;
let acme: Company;
let other: Company;

before(async () => {
  t = await createTestApp({ listen: true });
  base = `${t.container.gateways.sandboxBaseUrl()!}/sandbox/stripe/v1`;
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => t.close());

/** `POST /v1/payment_methods` as Stripe.js sends it: the publishable key in the form. */
async function browserCard(card: Record<string, string>) {
  const form = new URLSearchParams({ type: 'card', key: 'pk_test_browser' });
  for (const [name, value] of Object.entries(card)) form.set(`card[${name}]`, value);
  const response = await fetch(`${base}/payment_methods`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const payments = (company: Company, body: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: company.sandbox,
    payload: { product_reference: 'pay-by-mile-car', ...body },
  });

test('a card made in the browser becomes the policy’s default card; the service’s key claims it', async () => {
  const nextYear = String(new Date().getUTCFullYear() + 1);
  const made = await browserCard({
    number: '4242 4242 4242 4242',
    exp_month: '8',
    exp_year: nextYear,
    cvc: '123',
  });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const id = String(made.body['id']);
  assert.match(id, /^pm_/);
  assert.doesNotMatch(JSON.stringify(made.body), /4242424242424242|4242 4242/, 'the number is not kept');

  const { reference } = await make.livePolicy(t.app, acme);
  const added = await payments(acme, {
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: reference,
    payment_method_id: id,
  });
  assert.equal(added.statusCode, 200, added.body);
  const card = await payments(acme, { type: 'GET_PAYMENT_METHOD', policy_reference: reference });
  assert.partialDeepStrictEqual(card.json(), {
    payment_method_id: id,
    brand: 'visa',
    last4: '4242',
    exp_month: 8,
    exp_year: Number(nextYear),
  });

  // Claimed by Acme's account: another company's key cannot read or attach it any more.
  const read = await fetch(`${base}/payment_methods/${id}`, {
    headers: { authorization: `Bearer ${other.stripe_sandbox_secret_key}` },
  });
  assert.equal(read.status, 404);
  const { reference: otherReference } = await make.livePolicy(t.app, acme);
  const stolen = await payments(other, {
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: otherReference,
    payment_method_id: id,
  });
  assert.notEqual(stolen.statusCode, 200);
});

test('the typed number decides how charges go: 4000 0000 0000 9995 is declined for insufficient funds', async () => {
  const made = await browserCard({
    number: '4000000000009995',
    exp_month: '12',
    exp_year: '49',
    cvc: '1234',
  });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  assert.partialDeepStrictEqual(made.body, { card: { brand: 'visa', last4: '9995', exp_year: 2049 } });
  const { reference } = await make.livePolicy(t.app, acme);
  assert.equal(
    (
      await payments(acme, {
        type: 'ADD_NEW_PAYMENT_METHOD',
        policy_reference: reference,
        payment_method_id: String(made.body['id']),
      })
    ).statusCode,
    200,
  );
  // London to Manchester two days ago: enough usage premium to be charged (over the 30p minimum).
  const startSeconds = Math.floor(Date.now() / 1000) - 2 * 86_400;
  await make.journey(t.app, acme, reference, startSeconds, {
    points: [51.5074, -0.1278, 52.4862, -1.8904, 53.4808, -2.2426],
    durationSeconds: 4 * 3600,
  });
  const body = await make.statement(t.app, acme, reference);
  assert.ok(body.billed_premium >= 0.3, `billed ${body.billed_premium}`);
  assert.equal(body.payment?.payment_amount, null);
  assert.match(body.payment.error_message ?? '', /insufficient funds/i);
});

test('card details are checked as Stripe checks them, with Stripe’s card_error codes', async () => {
  const year = String(new Date().getUTCFullYear() + 2);
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ number: '4242424242424241', exp_month: '1', exp_year: year }, 'incorrect_number', 'card[number]'],
    [{ number: '4242', exp_month: '1', exp_year: year }, 'invalid_number', 'card[number]'],
    [
      { number: '4242424242424242', exp_month: '13', exp_year: year },
      'invalid_expiry_month',
      'card[exp_month]',
    ],
    [
      { number: '4242424242424242', exp_month: '1', exp_year: '2001' },
      'invalid_expiry_year',
      'card[exp_year]',
    ],
    [{ number: '4242424242424242', exp_month: '1', exp_year: year, cvc: '12' }, 'invalid_cvc', 'card[cvc]'],
    // A real card's number (Luhn-valid, not a test card) is refused in test mode, as on Stripe.
    [{ number: '4111111111111111', exp_month: '1', exp_year: year }, 'card_declined', 'card[number]'],
  ];
  for (const [card, code, param] of cases) {
    const refused = await browserCard(card);
    assert.equal(refused.status, 402, `${code}: ${JSON.stringify(refused.body)}`);
    assert.partialDeepStrictEqual(refused.body, { error: { type: 'card_error', code, param } });
  }
  const live = await fetch(`${base}/payment_methods`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Bearer pk_live_abcdefghijklmnop',
    },
    body: 'type=card&card[number]=4242424242424242&card[exp_month]=1&card[exp_year]=2040',
  });
  assert.equal(live.status, 401, 'a live key is refused');
  const missing = await browserCard({ number: '4242424242424242', exp_month: '1' });
  assert.equal(missing.status, 400);
  assert.partialDeepStrictEqual(missing.body, {
    error: { code: 'parameter_missing', param: 'card[exp_year]' },
  });
});
