import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { shiftedClock } from '../../../src/platform/clock.ts';
import { make } from '../../support/factories.ts';
import { startHeldProxy, type HeldProxy, type HeldRequest } from '../../support/held-proxy.ts';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { signInStaff } from '../staff/staff-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Payment {
  payment_reference: string;
  type: string;
  purpose: string;
  status: string;
  amount: number;
  refunded_amount: number;
  provider_payment_reference: string | null;
  policy_version_reference: string | null;
  error_message: string | null;
  next_attempt_at: string | null;
}
interface PolicyBody {
  policy_reference: string;
  policy_version_reference: string;
  payments: Payment[];
  versions: Array<{ version_type: string; policy_version_reference: string }>;
}

let t: TestApp;
let processor: HeldProxy;
let baseUrl: string;
let acme: Company;
let other: Company;

before(async () => {
  // The example policy's term, with time passing (leases expire and retries fall due as in life).
  // The sandbox is reached through a proxy that can hold one call (a processor slow to answer).
  processor = await startHeldProxy();
  t = await createTestApp({
    listen: true,
    startJobs: true,
    env: { SANDBOX_STRIPE_API_BASE: processor.url },
    overrides: { clock: shiftedClock('2025-08-01T12:00:00Z') },
  });
  baseUrl = t.container.gateways.sandboxBaseUrl()!;
  processor.target = `${baseUrl}/sandbox/stripe`;
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(async () => {
  await t.close();
  await processor.close();
});

const payments = (headers: Record<string, string>, body: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/payments',
    headers,
    payload: { product_reference: 'ppm-motor', ...body },
  });

/** The interface's new-policy flow: intent, client-side confirmation with a test card, then the policy with its payment block. */
async function payAndBind(
  card = 'pm_card_visa',
  upfront = 95.5,
  overrides: Parameters<typeof examplePolicyInput>[0] = {},
) {
  const intent = await payments(acme.sandbox, {
    type: 'CREATE_PAYMENT_INTENT',
    amount: Math.round(upfront * 100),
  });
  assert.equal(intent.statusCode, 200, intent.body);
  const {
    payment_provider_customer_ref: customer,
    payment_provider_transaction_ref: pi,
    payment_temporary_token: secret,
  } = intent.json<Record<string, string>>();
  // As Stripe.js does: confirm with the client secret, no secret key.
  const confirm = await fetch(`${baseUrl}/sandbox/stripe/v1/payment_intents/${pi}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: secret!, payment_method: card }),
  });
  const confirmed = (await confirm.json()) as { status: string; payment_method: string };
  const input = examplePolicyInput({
    proposer: { email: `payer.${Math.random().toString(36).slice(2)}@example.com` },
    pricing: { upfront_premium: upfront },
    payment: {
      provider_payment_reference: pi!,
      provider_customer_reference: customer!,
      payment_provider: 'stripe',
      payment_method_id: confirmed.payment_method,
    },
    ...overrides,
  });
  // Without payment_amount the expected amount is pricing.upfront_premium.
  delete input.payment?.payment_amount;
  return { pi: pi!, customer: customer!, confirmed, input };
}

async function waitForPayment(reference: string, predicate: (p: Payment[]) => boolean): Promise<Payment[]> {
  for (let i = 0; i < 100; i++) {
    const r = await t.app.inject({ url: `/payments?policy_reference=${reference}`, headers: acme.sandbox });
    const list = r.json<{ payments: Payment[] }>().payments;
    if (predicate(list)) return list;
    await sleep(100);
  }
  throw new Error('payment state not reached');
}

/** Cancels the policy (DELETE, 200) with `payload`, and waits for its refund to succeed: the payments then. */
async function cancelAndRefund(reference: string, payload: Record<string, unknown>): Promise<Payment[]> {
  const cancelled = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${reference}`,
    headers: acme.sandbox,
    payload,
  });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  return waitForPayment(reference, (list) =>
    list.some((p) => p.purpose === 'cancellation' && p.status === 'succeeded'),
  );
}

/**
 * A policy paid £100 by card, adjusted from its start down to £60 (a refund of £40); `arrange` readies
 * the processor for that refund first.
 */
async function adjustedDown(arrange: () => void) {
  const { input } = await payAndBind('pm_card_visa', 100);
  const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
  arrange();
  await make.adjustment(
    t.app,
    acme,
    { reference: policy.policy_reference, input },
    {
      pricing: { upfront_premium: 60, mta_fee: 0 },
      effective_date: input.policy.start_date,
      payment: undefined,
    },
  );
  return { input, policy };
}

/** `adjustedDown`, its refund held at the processor (sent, not yet answered) until `held.release()`. */
async function adjustedDownWithRefundHeld() {
  let held: HeldRequest | undefined;
  const made = await adjustedDown(() => {
    held = processor.hold((r) => r.method === 'POST' && r.path === '/v1/refunds');
  });
  await held!.arrived;
  return { ...made, held: held! };
}

describe('a renewal with a payment block', () => {
  test('the renewal premium is checked with the processor and recorded against the rn version, written at once', async () => {
    const bound = await payAndBind('pm_card_visa', 95.5, { policy: { auto_renew: true } });
    const { reference } = await make.policyFrom(t.app, acme, bound.input);
    const { pi, customer, confirmed } = await payAndBind('pm_card_visa', 120);
    const payment = {
      provider_payment_reference: pi,
      provider_customer_reference: customer,
      payment_provider: 'stripe',
      payment_method_id: confirmed.payment_method,
    };
    const renewal = (upfront: number) => ({
      pricing: { ...bound.input.pricing, upfront_premium: upfront },
      payment,
    });
    const wrong = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: renewal(110),
    });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.equal(wrong.json<{ code: string }>().code, 'PAYMENT_MISMATCH');
    // An amount finer than a penny is refused as the request's mistake, not compared in pence.
    const finer = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: { ...renewal(120), payment: { ...payment, payment_amount: 120.001 } },
    });
    assert.equal(finer.statusCode, 422, finer.body);
    assert.deepEqual(finer.json<{ errors: unknown[] }>().errors, [
      { path: '/body/payment/payment_amount', message: 'must have at most 2 decimal places' },
    ]);
    const r = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: renewal(120),
    });
    // Paid for, the renewal is written now even though the policy renews automatically.
    assert.equal(r.statusCode, 201, r.body);
    const body = r.json<PolicyBody>();
    const rn = body.versions.at(-1);
    assert.equal(rn?.version_type, 'rn');
    const paid = body.payments.find((p) => p.purpose === 'renewal');
    assert.equal(paid?.amount, 120);
    assert.equal(paid.status, 'succeeded');
    assert.equal(paid.provider_payment_reference, pi);
    assert.equal(paid.policy_version_reference, rn.policy_version_reference);
    const twice = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: renewal(120),
    });
    assert.equal(twice.statusCode, 409, 'one payment pays one term');
  });

  test('a block naming no payment (payment_amount alone) → 422 naming provider_payment_reference; nothing kept', async () => {
    const bound = await payAndBind('pm_card_visa', 95.5, { policy: { auto_renew: true } });
    const { reference } = await make.policyFrom(t.app, acme, bound.input);
    for (const payment of [{ payment_amount: 120 }, { payment_amount: 120, payment_provider: 'stripe' }]) {
      const refused = await t.app.inject({
        method: 'POST',
        url: `/policys/${reference}/renewals`,
        headers: acme.sandbox,
        payload: { pricing: { ...bound.input.pricing, upfront_premium: 120 }, payment },
      });
      assert.equal(refused.statusCode, 422, refused.body);
      const problem = refused.json<{ code: string; errors: Array<{ path: string; message: string }> }>();
      assert.equal(problem.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        problem.errors.map((e) => e.path),
        ['/body/payment/provider_payment_reference'],
      );
      assert.match(problem.errors[0]!.message, /^is required with payment_amount/);
    }
    // Neither written nor kept for the automatic renewal: the policy is as it was.
    const read = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
    const policy = read.json<PolicyBody & { renewal?: unknown }>();
    assert.equal(policy.renewal, undefined);
    assert.deepEqual(
      policy.versions.map((v) => v.version_type),
      ['nb'],
    );
    assert.ok(!policy.payments.some((p) => p.purpose === 'renewal'));
  });
});

describe('new policy with a payment block', () => {
  test('intent → client confirmation → policy: the payment is checked, recorded and its card made the default', async () => {
    const { pi, confirmed, input } = await payAndBind();
    assert.equal(confirmed.status, 'succeeded');
    const r = await t.app.inject({ method: 'POST', url: '/policys', headers: acme.sandbox, payload: input });
    assert.equal(r.statusCode, 201, r.body);
    const policy = r.json<PolicyBody>();
    assert.equal(policy.payments.length, 1);
    assert.equal(policy.payments[0]!.status, 'succeeded');
    assert.equal(policy.payments[0]!.amount, 95.5);
    assert.equal(policy.payments[0]!.provider_payment_reference, pi);
    assert.equal(policy.payments[0]!.policy_version_reference, policy.policy_version_reference);

    const card = await payments(acme.sandbox, {
      type: 'GET_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
    });
    assert.equal(card.statusCode, 200, card.body);
    assert.equal(card.json<{ last4: string; brand: string }>().last4, '4242');

    // The same intent cannot bind a second policy.
    const again = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: { ...input, proposer: { ...input.proposer, email: 'second@example.com' } },
    });
    assert.equal(again.statusCode, 409, again.body);
  });

  test('a payment for another amount, an unconfirmed one or an unknown one → 422 and no policy', async () => {
    const { input } = await payAndBind('pm_card_visa', 95.5);
    const wrongAmount = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: { ...input, pricing: { ...input.pricing, upfront_premium: 99 } },
    });
    assert.equal(wrongAmount.statusCode, 422);
    assert.equal(wrongAmount.json<{ code: string }>().code, 'PAYMENT_MISMATCH');
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: { ...input, payment: { ...input.payment, provider_payment_reference: 'pi_nope' } },
    });
    assert.equal(unknown.statusCode, 422);
    const declined = await payAndBind('pm_card_chargeDeclined');
    const r = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: declined.input,
    });
    assert.equal(r.statusCode, 422, r.body);
    const count = await t.container.database.db
      .selectFrom('policies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', 'is not', null)
      .executeTakeFirstOrThrow();
    assert.ok(count.n >= 1);
  });

  test('a block naming no payment (payment_amount alone) → 422 naming provider_payment_reference and no policy', async () => {
    const { input } = await payAndBind('pm_card_visa', 95.5);
    const refused = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: { ...input, payment: { payment_amount: 95.5 } },
    });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.deepEqual(
      refused.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path),
      ['/body/payment/provider_payment_reference'],
    );
    const users = await t.container.database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', input.proposer.email)
      .execute();
    assert.deepEqual(users, []);
  });
});

describe('POST /payments', () => {
  test('validation: missing fields for a type → 422 naming them; unknown type → 422', async () => {
    const r = await payments(acme.sandbox, { type: 'CREATE_PAYMENT_INTENT' });
    assert.equal(r.statusCode, 422);
    assert.deepEqual(
      r.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path),
      ['/body/amount'],
    );
    assert.equal((await payments(acme.sandbox, { type: 'REFUND_EVERYTHING' })).statusCode, 422);
    assert.equal(
      (await payments(acme.sandbox, { type: 'CREATE_PAYMENT_INTENT', amount: 12.5 })).statusCode,
      422,
      'minor units are integers',
    );
  });

  test('another company or environment cannot see a policy’s cards (404); no credentials → 401', async () => {
    const { input } = await payAndBind();
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    assert.equal(
      (
        await payments(other.sandbox, {
          type: 'GET_PAYMENT_METHOD',
          policy_reference: policy.policy_reference,
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (
        await payments(acme.production, {
          type: 'GET_PAYMENT_METHOD',
          policy_reference: policy.policy_reference,
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (await payments({}, { type: 'GET_PAYMENT_METHOD', policy_reference: policy.policy_reference }))
        .statusCode,
      401,
    );
    assert.equal(
      (
        await t.app.inject({
          url: `/payments?policy_reference=${policy.policy_reference}`,
          headers: other.sandbox,
        })
      ).statusCode,
      404,
    );
  });

  test('ADD_NEW_PAYMENT_METHOD makes the new card the default; refund: true still names the card that paid', async () => {
    const { input } = await payAndBind();
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    const added = await payments(acme.sandbox, {
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
      payment_method_id: 'pm_card_mastercard',
    });
    assert.equal(added.statusCode, 200, added.body);
    assert.match(added.json<{ payment_method_id: string }>().payment_method_id, /^pm_/);
    const current = await payments(acme.sandbox, {
      type: 'GET_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
    });
    assert.equal(current.json<{ last4: string }>().last4, '4444');
    const refundCard = await payments(acme.sandbox, {
      type: 'GET_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
      refund: true,
    });
    assert.equal(refundCard.json<{ last4: string }>().last4, '4242');
  });
});

describe('adjustments, cancellations and statement charges', () => {
  test('an adjustment charges the prorated difference plus the MTA fee; a cancellation refunds to the original card', async () => {
    const { input } = await payAndBind('pm_card_visa', 100);
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    // Effective at the start of the term: the whole difference (20) plus the mta_fee.
    await make.adjustment(
      t.app,
      acme,
      { reference: policy.policy_reference, input },
      { pricing: { upfront_premium: 120 }, effective_date: input.policy.start_date, payment: undefined },
    );
    // Read now, so that a view with the charge still pending is cached before the charge settles.
    const pending = (
      await t.app.inject({ url: `/policys/${policy.policy_reference}`, headers: acme.sandbox })
    ).json<PolicyBody>();
    assert.ok(pending.payments.some((p) => p.purpose === 'adjustment'));
    const fee = input.pricing.mta_fee ?? 0;
    const afterAdjust = await waitForPayment(policy.policy_reference, (list) =>
      list.some((p) => p.purpose === 'adjustment' && p.status === 'succeeded'),
    );
    assert.equal(afterAdjust.find((p) => p.purpose === 'adjustment')!.amount, 20 + fee);
    // The policy object shows the settled charge too: a view read before it must not be served stale.
    const read = async () =>
      (
        await t.app.inject({ url: `/policys/${policy.policy_reference}`, headers: acme.sandbox })
      ).json<PolicyBody>();
    assert.equal((await read()).payments.find((p) => p.purpose === 'adjustment')?.status, 'succeeded');

    const afterCancel = await cancelAndRefund(policy.policy_reference, {
      effective_date: input.policy.start_date,
      reason: 'test',
    });
    const settled = await waitForPayment(
      policy.policy_reference,
      (list) => list.filter((p) => p.purpose === 'cancellation' && p.status === 'succeeded').length === 2,
    );
    const refunds = settled.filter((p) => p.purpose === 'cancellation');
    assert.ok(refunds.every((r) => r.type === 'refund'));
    assert.ok(afterCancel.some((p) => p.purpose === 'cancellation'));
    // Cancelled on the day it was bought, in the cooling-off period: the full term unused is the
    // adjusted upfront (120) with no cancel or admin fee, paid back by the new business payment (100)
    // and the adjustment's charge (20 of its 20 + MTA fee).
    assert.ok((input.pricing.cancel_fee ?? 0) + (input.pricing.admin_fee ?? 0) > 0);
    assert.deepEqual(
      refunds.map((r) => r.amount).sort((a, b) => b - a),
      [100, 20],
    );
    assert.equal(settled.find((p) => p.purpose === 'new_business')?.refunded_amount, 100);
    assert.equal(settled.find((p) => p.purpose === 'adjustment' && p.type === 'charge')?.refunded_amount, 20);
  });

  test('a cancellation after the 14 days of cooling-off deducts the cancel and admin fees from the refund', async () => {
    const { input } = await payAndBind('pm_card_visa', 100);
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    // Bought 15 days ago (its nb written then): the cooling-off period ended yesterday.
    await t.container.database.db
      .updateTable('policy_versions')
      .set({ created_at: new Date(t.container.clock.now().getTime() - 15 * 86_400_000) })
      .where('id', '=', policy.policy_version_reference)
      .execute();
    const afterCancel = await cancelAndRefund(policy.policy_reference, {
      effective_date: input.policy.start_date,
      reason: 'test',
    });
    const refund = afterCancel.find((p) => p.purpose === 'cancellation')!;
    // Full term unused: the upfront (100) − cancel fee − admin fee.
    const fees = (input.pricing.cancel_fee ?? 0) + (input.pricing.admin_fee ?? 0);
    assert.ok(fees > 0);
    assert.equal(refund.amount, 100 - fees);
  });

  test('a cancellation’s payment_amount finer than a penny answers 422 in both forms and cancels nothing', async () => {
    const { input } = await payAndBind('pm_card_visa', 100);
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    for (const [url, payload] of [
      [`/policys/${policy.policy_reference}`, { payment_amount: 0.001 }],
      ['/policys', { policy_reference: policy.policy_reference, payment_amount: -12.345 }],
    ] as const) {
      const r = await t.app.inject({ method: 'DELETE', url, headers: acme.sandbox, payload });
      assert.equal(r.statusCode, 422, r.body);
      assert.deepEqual(r.json<{ errors: unknown[] }>().errors, [
        { path: '/body/payment_amount', message: 'must have at most 2 decimal places' },
      ]);
    }
    const read = await t.app.inject({ url: `/policys/${policy.policy_reference}`, headers: acme.sandbox });
    assert.equal(read.json<{ status: string }>().status, 'active');
  });

  test('a cancellation before the end of a period a statement has billed answers 409 naming the earliest time; from then it cancels', async () => {
    const { input } = await payAndBind('pm_card_visa', 100, {
      pricing: { upfront_premium: 100, subscription_premium: 42, subscription_installments: 12 },
    });
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    const reference = policy.policy_reference;
    const seconds = (iso: string) => Date.parse(iso) / 1000;
    const statement = async (iso: string) => {
      const r = await t.app.inject({
        method: 'POST',
        url: '/statements',
        headers: acme.sandbox,
        payload: { policy_reference: reference, effective_date: seconds(iso) },
      });
      assert.equal(r.statusCode, 201, r.body);
    };
    const cancel = (url: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'DELETE', url, headers: acme.sandbox, payload });
    const refused = (response: Awaited<ReturnType<typeof cancel>>, earliest: string) => {
      assert.equal(response.statusCode, 409, response.body);
      const problem = response.json<{ code: string; errors: unknown[] }>();
      assert.equal(problem.code, 'CONFLICT');
      assert.deepEqual(problem.errors, [
        {
          path: '/body/effective_date',
          message: `must not be before ${String(seconds(earliest))} (${earliest}), the end of the last statement's period`,
        },
      ]);
    };
    // A statement to 15 July, paid by card; a cancellation from 10 July would leave its days after that billed.
    await statement('2025-07-15T12:00:00.000Z');
    refused(
      await cancel(`/policys/${reference}`, { effective_date: seconds('2025-07-10T00:00:00Z') }),
      '2025-07-15T12:00:00.000Z',
    );
    // Billed ahead to 15 September (the 1 August and 1 September installments of £42): neither a
    // cancellation from 20 August, nor from inception, nor from now is accepted.
    await statement('2025-09-15T12:00:00.000Z');
    for (const [url, payload] of [
      [`/policys/${reference}`, { effective_date: seconds('2025-08-20T00:00:00Z'), reason: 'vehicle sold' }],
      ['/policys', { policy_reference: reference, effective_date: input.policy.start_date - 86_400 }],
      [`/policys/${reference}`, {}],
    ] as const) {
      refused(await cancel(url, payload), '2025-09-15T12:00:00.000Z');
    }
    const charges = await waitForPayment(
      reference,
      (list) => list.filter((p) => p.purpose === 'statement' && p.status === 'succeeded').length === 2,
    );
    assert.deepEqual(
      charges.map((p) => p.purpose).sort(),
      ['new_business', 'statement', 'statement'],
      'nothing refunded or charged by the refusals',
    );
    const active = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
    assert.equal(active.json<{ status: string }>().status, 'active');
    // From the end of the period billed, it cancels.
    const cancelled = await cancel(`/policys/${reference}`, {
      effective_date: seconds('2025-09-15T12:00:00.000Z'),
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    type Cancelled = { status: string; versions: Array<{ version_type: string; effective_date: string }> };
    const body = cancelled.json<Cancelled>();
    assert.equal(body.status, 'cancelled');
    assert.equal(body.versions.at(-1)?.version_type, 'cn');
    assert.equal(body.versions.at(-1)?.effective_date, '2025-09-15T12:00:00.000Z');
    // With no statement issued, a date before the start still cancels from inception.
    const { body: unbilled } = await make.policyFrom<PolicyBody>(t.app, acme, (await payAndBind()).input);
    const fromInception = await cancel('/policys', {
      policy_reference: unbilled.policy_reference,
      effective_date: input.policy.start_date - 86_400,
    });
    assert.equal(fromInception.statusCode, 200, fromInception.body);
    assert.equal(
      fromInception.json<Cancelled>().versions.at(-1)?.effective_date,
      new Date(input.policy.start_date * 1000).toISOString(),
    );
  });

  test('a cancellation while an adjustment’s refund is still on its way never refunds more than the card paid', async () => {
    // The adjustment's refund reaches a processor slow to answer: recorded, not yet sent back.
    const { input, policy, held } = await adjustedDownWithRefundHeld();
    // The whole 100 asked back: only what the adjustment does not already refund (40) is left to give.
    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${policy.policy_reference}`,
      headers: acme.sandbox,
      payload: { effective_date: input.policy.start_date, payment_amount: 100 },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    held.release();
    const settled = await waitForPayment(
      policy.policy_reference,
      (list) =>
        list.some((p) => p.purpose === 'adjustment' && p.status === 'succeeded') &&
        list.some((p) => p.purpose === 'cancellation' && p.status !== 'pending'),
    );
    assert.equal(settled.find((p) => p.purpose === 'adjustment')?.amount, 40);
    const refund = settled.find((p) => p.purpose === 'cancellation');
    assert.equal(refund?.amount, 60);
    assert.equal(refund.status, 'succeeded');
    const original = settled.find((p) => p.purpose === 'new_business');
    assert.equal(original?.refunded_amount, 100);
  });

  test('two refunds of one card payment sent by two workers at once both count in what it has refunded', async () => {
    // This process's worker sends the adjustment's refund (40) to a processor slow to answer...
    const { input, policy, held } = await adjustedDownWithRefundHeld();
    // ...while a second worker on the same database sends the cancellation's (60) and records it.
    const second = await createTestApp({
      startJobs: true,
      env: { SANDBOX_STRIPE_API_BASE: processor.url },
      // Its own close leaves the shared database to this file's app.
      overrides: {
        database: { ...t.container.database, close: async () => undefined },
        clock: shiftedClock('2025-08-01T12:00:00Z'),
      },
    });
    try {
      await cancelAndRefund(policy.policy_reference, {
        effective_date: input.policy.start_date,
        payment_amount: 60,
      });
    } finally {
      held.release();
      await second.close();
    }
    const settled = await waitForPayment(policy.policy_reference, (list) =>
      list.some((p) => p.purpose === 'adjustment' && p.status === 'succeeded'),
    );
    const original = settled.find((p) => p.purpose === 'new_business');
    assert.equal(original?.refunded_amount, 100, 'the 40 and the 60, neither written over the other');
    assert.equal(original.status, 'refunded');
  });

  test('a refund the processor left pending, whose job runs again, counts once in what the card has refunded', async () => {
    const { policy } = await adjustedDown(() => {
      processor.amend(
        (r) => r.method === 'POST' && r.path === '/v1/refunds',
        (refund) => ({ ...refund, status: 'pending' }),
      );
    });
    const sent = (
      await waitForPayment(policy.policy_reference, (list) =>
        list.some((p) => p.type === 'refund' && p.provider_payment_reference !== null),
      )
    ).find((p) => p.type === 'refund')!;
    assert.equal(sent.status, 'pending');
    // Its job again (delivered twice, or run on for the pending refund): the processor answers with the
    // same refund, now succeeded.
    await t.container.jobs.send('payments.settle', { paymentId: sent.payment_reference });
    const settled = await waitForPayment(policy.policy_reference, (list) =>
      list.some((p) => p.payment_reference === sent.payment_reference && p.status === 'succeeded'),
    );
    assert.equal(settled.find((p) => p.purpose === 'new_business')?.refunded_amount, 40);
    const events = await t.container.database.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'payment.refunded')
      .execute();
    assert.equal(
      events.filter(
        (e) => (e.data as { payment_reference?: string }).payment_reference === sent.payment_reference,
      ).length,
      1,
    );
  });

  test('a declined statement charge is recorded for dunning; RETRY_PAYMENT retries; a new card collects it; a paid version → 409', async () => {
    const { policy, declined: outcome } = await declinedStatementCharge(1234);
    assert.equal(outcome.payment_amount, null);
    assert.match(outcome.error_message ?? '', /insufficient|declined/i);
    const failed = (
      await waitForPayment(policy.policy_reference, (list) => list.some((p) => p.purpose === 'statement'))
    ).find((p) => p.purpose === 'statement')!;
    assert.equal(failed.status, 'failed');
    assert.ok(failed.next_attempt_at !== null, 'scheduled for dunning');

    const retry = await payments(acme.sandbox, {
      type: 'RETRY_PAYMENT',
      policy_reference: policy.policy_reference,
      policy_version_reference: policy.policy_version_reference,
    });
    assert.equal(retry.statusCode, 200);
    assert.equal(retry.json<{ payment_amount: number | null }>().payment_amount, null);

    await payments(acme.sandbox, {
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
      payment_method_id: 'pm_card_visa',
    });
    await t.container.services.payments.collectDue(new Date(Date.now() + 60_000));
    const paid = await waitForPayment(policy.policy_reference, (list) =>
      list.some((p) => p.purpose === 'statement' && p.status === 'succeeded'),
    );
    assert.equal(paid.find((p) => p.purpose === 'statement')!.amount, 12.34);
    const again = await payments(acme.sandbox, {
      type: 'RETRY_PAYMENT',
      policy_reference: policy.policy_reference,
      policy_version_reference: policy.policy_version_reference,
    });
    assert.equal(again.statusCode, 409);
  });
});

describe('Stripe webhooks', () => {
  test('a bad signature is refused; a good one is processed once', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/webhooks/stripe',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{"id":"evt_1","type":"payment_intent.succeeded"}',
    });
    assert.equal(bad.statusCode, 401);
    const { stripeSignatureHeader } = await import('../../../src/integrations/payments/index.ts');
    const body = JSON.stringify({
      id: 'evt_test_once',
      object: 'event',
      type: 'customer.created',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'cus_x', object: 'customer' } },
    });
    const headers = {
      'content-type': 'application/json',
      'stripe-signature': stripeSignatureHeader(
        body,
        t.container.gateways.sandboxWebhookSecret,
        Math.floor(Date.now() / 1000),
      ),
    };
    const first = await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers, payload: body });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { received: true, duplicate: false });
    const second = await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers, payload: body });
    assert.deepEqual(second.json(), { received: true, duplicate: true });
  });
});

/** A policy whose statement charge the processor declined (insufficient funds): in dunning. */
async function declinedStatementCharge(amountPence = 4321) {
  const { input } = await payAndBind();
  const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
  await payments(acme.sandbox, {
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: policy.policy_reference,
    payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds',
  });
  const record = await t.container.database.db
    .selectFrom('policies')
    .select(['id', 'company_id'])
    .where('policy_reference', '=', policy.policy_reference)
    .executeTakeFirstOrThrow();
  const declined = await t.container.services.payments.chargeStatement(
    asTenant(record.company_id, 'sandbox'),
    {
      policyId: record.id,
      policyVersionId: policy.policy_version_reference,
      amountPence,
    },
  );
  assert.equal(declined?.status, 'failed');
  return { policy, declined };
}

/** The processor's successful charges of one payment, and its payment.succeeded events. */
async function successesOf(paymentReference: string) {
  const events = await t.container.database.db
    .selectFrom('events')
    .select(['id', 'data'])
    .where('type', '=', 'payment.succeeded')
    .execute();
  const intents = await t.container.database.db
    .selectFrom('stripe_sandbox_objects' as never)
    .select(['data' as never])
    .where('type' as never, '=', 'payment_intent' as never)
    .execute();
  return {
    charges: (intents as Array<{ data: { status: string; metadata: Record<string, string> } }>).filter(
      (i) => i.data.metadata['milepost_payment'] === paymentReference && i.data.status === 'succeeded',
    ).length,
    events: events.filter(
      (e) => (e.data as { payment_reference?: string }).payment_reference === paymentReference,
    ).length,
  };
}

describe('one payment, one event', () => {
  test('twenty concurrent RETRY_PAYMENT of one declined payment: one charge at the processor, one payment.succeeded', async () => {
    const { policy, declined } = await declinedStatementCharge();
    // A new default card, set at the processor directly: ADD_NEW_PAYMENT_METHOD would collect at once,
    // and the point here is twenty retries racing.
    const customer = (
      await t.container.database.db
        .selectFrom('payments')
        .select('provider_customer_id')
        .where('id', '=', declined.payment_reference)
        .executeTakeFirstOrThrow()
    ).provider_customer_id!;
    const gateway = t.container.gateways.forEnvironment('sandbox', acme.stripe_sandbox_secret_key);
    const card = await gateway.attachPaymentMethod({
      customerId: customer,
      paymentMethodId: 'pm_card_visa',
      idempotencyKey: `attach-${declined.payment_reference}`,
    });
    await gateway.setDefaultPaymentMethod(customer, card.id);
    const retries = await Promise.all(
      Array.from({ length: 20 }, () =>
        payments(acme.sandbox, {
          type: 'RETRY_PAYMENT',
          policy_reference: policy.policy_reference,
          policy_version_reference: policy.policy_version_reference,
        }),
      ),
    );
    const statuses = retries.map((r) => r.statusCode);
    assert.ok(
      statuses.every((s) => s === 200 || s === 409),
      statuses.join(','),
    );
    const { charges, events } = await successesOf(declined.payment_reference);
    assert.equal(charges, 1, `${String(charges)} successful charges`);
    assert.equal(events, 1, `${String(events)} payment.succeeded events`);
    assert.equal(statuses.filter((s) => s === 200).length >= 1, true);
  });

  test('a card added while the old one is being charged: that attempt is left alone, and its decline is tried at once on the new card', async () => {
    const { policy, declined } = await declinedStatementCharge();
    const reference = declined.payment_reference;
    const statusOf = async () =>
      (await waitForPayment(policy.policy_reference, () => true)).find(
        (p) => p.payment_reference === reference,
      )!;
    assert.ok(
      Date.parse((await statusOf()).next_attempt_at!) > t.container.clock.now().getTime() + 3_600_000,
      'in dunning',
    );
    // The dunning attempt falls due, and the processor is slow to answer its charge of the old card.
    const held = processor.hold(
      (r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.body.includes(reference),
    );
    await t.container.database.db
      .updateTable('payments')
      .set({ next_attempt_at: t.container.clock.now() })
      .where('id', '=', reference)
      .execute();
    const attempt = t.container.services.payments.collectDue();
    await held.arrived;
    assert.equal((await statusOf()).status, 'pending', 'an attempt in flight is pending');
    const added = await payments(acme.sandbox, {
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policy.policy_reference,
      payment_method_id: 'pm_card_visa',
    });
    assert.equal(added.statusCode, 200, added.body);
    const retry = await payments(acme.sandbox, {
      type: 'RETRY_PAYMENT',
      policy_reference: policy.policy_reference,
      policy_version_reference: policy.policy_version_reference,
    });
    assert.equal(retry.statusCode, 409, 'no second attempt beside the one in flight');
    held.release();
    await attempt;
    // The old card declined again; the new one is charged now, not on the next dunning day.
    for (let i = 0; i < 50 && (await statusOf()).status !== 'succeeded'; i++) {
      await t.container.services.payments.collectDue();
      await sleep(100);
    }
    const paid = await statusOf();
    assert.equal(paid.status, 'succeeded', JSON.stringify(paid));
    assert.equal(paid.error_message, null);
    assert.deepEqual(await successesOf(reference), { charges: 1, events: 1 });
  });
});

describe('the audit of a staff action the processor fails', () => {
  test('a server error (the processor refusing our key) is recorded as failed, with the problem answered', async () => {
    const { policy } = await declinedStatementCharge();
    const staff = await signInStaff(t, 'ops-processor-down@example.com', 'operations');
    processor.refuse((r) => r.method === 'GET' && r.path.startsWith('/v1/customers/'));
    const answer = await t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: { ...staff.headers, client_id: acme.client_id, environment: 'sandbox' },
      payload: {
        product_reference: 'ppm-motor',
        type: 'RETRY_PAYMENT',
        policy_reference: policy.policy_reference,
        policy_version_reference: policy.policy_version_reference,
      },
    });
    assert.ok(answer.statusCode >= 500, answer.body);
    const records = await t.app.inject({
      url: `/admin/audit?request_id=${String(answer.headers['x-request-id'])}`,
      headers: t.adminHeaders,
    });
    const ofRequest = records
      .json<{ data: Array<{ outcome: string; actor: string; table: string | null; after: unknown }> }>()
      .data.filter((r) => r.table === null);
    assert.equal(ofRequest.length, 1, records.body);
    const [record] = ofRequest;
    assert.equal(record?.outcome, 'failed');
    assert.equal(record.actor, 'staff:ops-processor-down@example.com');
    assert.deepEqual(record.after, { status: answer.statusCode, code: answer.json<{ code: string }>().code });
  });
});

describe('charges below the processor minimum', () => {
  test('a 21p statement is carried to the next one, never charged on its own nor lost', async () => {
    const { input } = await payAndBind('pm_card_visa', 95.5, {
      policy: { billing_day_date: 1 },
      pricing: { subscription_premium: 0.21, subscription_installments: 12 },
    });
    const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
    assert.ok(policy.policy_reference);
    interface Statement {
      billed_premium: number;
      carried_forward: number;
      brought_forward: number;
      payment?: { payment_amount: number | null };
    }
    const statement = async (iso: string) => {
      const r = await t.app.inject({
        method: 'POST',
        url: '/statements',
        headers: acme.sandbox,
        payload: { policy_reference: policy.policy_reference, effective_date: Date.parse(iso) / 1000 },
      });
      assert.equal(r.statusCode, 201, r.body);
      return r.json<Statement>();
    };
    // The installment due at the start: 21p, below Stripe's 30p.
    const small = await statement('2025-06-15T12:00:00Z');
    assert.equal(small.billed_premium, 0.21);
    assert.equal(small.carried_forward, 0.21);
    assert.equal(small.payment, undefined, 'no charge is attempted');
    // July's installment and the 21p brought in: 42p, charged.
    const next = await statement('2025-07-15T12:00:00Z');
    assert.equal(next.brought_forward, 0.21);
    assert.equal(next.carried_forward, 0);
    assert.equal(next.billed_premium, 0.42);
    assert.equal(next.payment?.payment_amount, 0.42);
    const charges = (
      await waitForPayment(policy.policy_reference, (list) => list.some((p) => p.purpose === 'statement'))
    ).filter((p) => p.purpose === 'statement');
    assert.deepEqual(
      charges.map((p) => [p.amount, p.status]),
      [[0.42, 'succeeded']],
    );
  });
});

describe('a card for a policy created without one', () => {
  test('ADD_NEW_PAYMENT_METHOD makes the customer, answers with its type, and the next statement is charged', async () => {
    const { reference } = await make.policy(t.app, acme);
    const added = await payments(acme.sandbox, {
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: reference,
      payment_method_id: 'pm_card_visa',
    });
    assert.equal(added.statusCode, 200, added.body);
    const body = added.json<{ type: string; payment_method_id: string }>();
    assert.equal(body.type, 'ADD_NEW_PAYMENT_METHOD');
    assert.match(body.payment_method_id, /^pm_/);
    const card = await payments(acme.sandbox, { type: 'GET_PAYMENT_METHOD', policy_reference: reference });
    assert.equal(card.json<{ last4: string }>().last4, '4242');
    const statement = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: { policy_reference: reference, effective_date: Date.parse('2025-06-20T12:00:00Z') / 1000 },
    });
    assert.equal(statement.statusCode, 201, statement.body);
    const charged = statement.json<{ billed_premium: number; payment?: { payment_amount: number | null } }>();
    assert.ok(charged.billed_premium > 0);
    assert.equal(charged.payment?.payment_amount, charged.billed_premium);
  });
});
