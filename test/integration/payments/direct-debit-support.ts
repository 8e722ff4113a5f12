import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestApp } from '../../support/app.ts';

/** Stripe's Bacs test sort code, and its test account numbers by how they behave. */
export const BACS_SORT_CODE = '108800';
export const BACS_ACCOUNTS = {
  succeeds: '00012345',
  insufficientFunds: '22222227',
  notAuthorised: '33333335',
} as const;

type Headers = Readonly<Record<string, string>>;

export interface Collection {
  payment_reference: string;
  amount: number;
  status: string;
  collect_on: string | null;
  notice_sent_at: string | null;
  provider_payment_reference: string | null;
  settled_at: string | null;
  failure_code: string | null;
  attempts: number;
  awaiting_new_method: boolean;
}
export interface PolicyDirectDebit {
  notice_working_days: number;
  mandates: Array<{
    mandate_reference: string | null;
    provider_mandate_id: string | null;
    status: string;
    default: boolean;
    account_last4: string | null;
    sort_code: string | null;
    account_holder_name: string | null;
    cancel_reason: string | null;
  }>;
  collections: Collection[];
}

/** The sandbox's Stripe API, form-encoded, with a key (a secret one) or none (a browser). */
export async function sandboxPost(
  t: TestApp,
  path: string,
  form: Record<string, string>,
  secretKey?: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${t.container.gateways.sandboxBaseUrl() ?? ''}/sandbox/stripe/v1${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(secretKey === undefined ? {} : { authorization: `Bearer ${secretKey}` }),
    },
    body: new URLSearchParams(form),
  });
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

/**
 * A policyholder sets up a Direct Debit as the web app does: a SetupIntent from Milepost, confirmed in
 * the browser with the bank details and the payer's acceptance, then its payment method sent with
 * ADD_NEW_PAYMENT_METHOD. Returns the payment method id.
 */
export async function setUpDirectDebit(
  t: TestApp,
  headers: Headers,
  policyReference: string,
  account: string = BACS_ACCOUNTS.succeeds,
): Promise<string> {
  const paymentMethod = await confirmBacsSetup(t, headers, policyReference, account);
  const added = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers,
    payload: {
      type: 'ADD_NEW_PAYMENT_METHOD',
      product_reference: 'ppm-motor',
      policy_reference: policyReference,
      payment_method_id: paymentMethod,
    },
  });
  assert.equal(added.statusCode, 200, added.body);
  return paymentMethod;
}

/** The first two steps of `setUpDirectDebit`: a SetupIntent confirmed in the browser. Returns its payment method. */
export async function confirmBacsSetup(
  t: TestApp,
  headers: Headers,
  policyReference: string,
  account: string = BACS_ACCOUNTS.succeeds,
): Promise<string> {
  const created = await t.app.inject({
    method: 'POST',
    url: `/policys/${policyReference}/direct-debit/setup-intents`,
    headers,
  });
  assert.equal(created.statusCode, 201, created.body);
  const intent = created.json<{ setup_intent_id: string; client_secret: string }>();
  const confirmed = await sandboxPost(t, `/setup_intents/${intent.setup_intent_id}/confirm`, {
    client_secret: intent.client_secret,
    'payment_method_data[type]': 'bacs_debit',
    'payment_method_data[bacs_debit][sort_code]': BACS_SORT_CODE,
    'payment_method_data[bacs_debit][account_number]': account,
    'payment_method_data[billing_details][name]': 'Jane Example',
    'payment_method_data[billing_details][email]': 'jane@example.com',
    'payment_method_data[billing_details][address][line1]': '1 High Street',
    'payment_method_data[billing_details][address][city]': 'London',
    'payment_method_data[billing_details][address][postal_code]': 'SW1A 1AA',
    'payment_method_data[billing_details][address][country]': 'GB',
    'mandate_data[customer_acceptance][type]': 'online',
    'mandate_data[customer_acceptance][online][infer_from_client]': 'true',
  });
  return String(confirmed['payment_method']);
}

export async function directDebitOf(
  t: TestApp,
  headers: Headers,
  policyReference: string,
): Promise<PolicyDirectDebit> {
  const response = await t.app.inject({
    method: 'GET',
    url: `/policys/${policyReference}/direct-debit`,
    headers,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json<PolicyDirectDebit>();
}

/** Polls until `done` holds of the policy's Direct Debit (webhooks arrive after the sandbox answers). */
export async function waitForDirectDebit(
  t: TestApp,
  headers: Headers,
  policyReference: string,
  done: (dd: PolicyDirectDebit) => boolean,
  what: string,
): Promise<PolicyDirectDebit> {
  let last: PolicyDirectDebit | undefined;
  for (let i = 0; i < 200; i += 1) {
    last = await directDebitOf(t, headers, policyReference);
    if (done(last)) return last;
    await sleep(50);
  }
  assert.fail(`${what}: ${JSON.stringify(last)}`);
}

/** The sandbox settles every Bacs payment whose settlement its clock (the app's) has passed. */
export async function settleDue(t: TestApp, secretKey: string): Promise<void> {
  await sandboxPost(t, '/test_helpers/sandbox/settle_due_payments', {}, secretKey);
}

/** A statement now, for the policy, effective at `iso`. */
export async function statement(t: TestApp, headers: Headers, policyReference: string, iso: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/statements',
    headers,
    payload: { policy_reference: policyReference, effective_date: Date.parse(iso) / 1000 },
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json<{
    billed_premium: number;
    policy_version_reference: string;
    payment?: { payment_amount: number | null; error_message?: string };
  }>();
}
