import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readBacsPaymentMethod, readCustomerAcceptance } from './bacs-details.ts';
import { bacsBehaviourOfLast4, BACS_TEST_ACCOUNTS } from './bacs-objects.ts';
import { bacsSettlesAt } from './bacs-payments.ts';
import { StripeApiError } from './errors.ts';
import { parseForm } from './form.ts';

const seconds = (iso: string): number => Date.parse(iso) / 1000;
const settles = (confirmedAt: string): string =>
  new Date(bacsSettlesAt(seconds(confirmedAt)) * 1000).toISOString();

describe('Bacs settlement day', () => {
  test('00:00 London time on the third working day after submission', () => {
    // Wednesday 23 December 2026: 24 December, then 29 (after Christmas and the Boxing Day substitute), 30.
    assert.equal(settles('2026-12-23T10:00:00Z'), '2026-12-30T00:00:00.000Z');
    // In British Summer Time, London's midnight is 23:00 UTC the day before.
    assert.equal(settles('2026-06-01T09:00:00Z'), '2026-06-03T23:00:00.000Z');
  });
  test('confirmed after 20:00 UTC, or on a day Bacs does not work, it is submitted the next working day', () => {
    assert.equal(settles('2026-12-23T19:59:59Z'), '2026-12-30T00:00:00.000Z');
    // Thursday 24 December after 20:00: submitted Tuesday 29; 30, 31, then Monday 4 January 2027.
    assert.equal(settles('2026-12-24T20:00:00Z'), '2027-01-04T00:00:00.000Z');
    // Saturday 28 November 2026: submitted Monday 30; settles Thursday 3 December.
    assert.equal(settles('2026-11-28T12:00:00Z'), '2026-12-03T00:00:00.000Z');
    // Good Friday 2027 (26 March): submitted Tuesday 30 March, after Easter Monday; settles 2 April.
    assert.equal(settles('2027-03-26T09:00:00Z'), '2027-04-01T23:00:00.000Z');
  });
});

describe("Stripe's Bacs test accounts", () => {
  test('each behaves as Stripe documents it, through the four digits a stored account keeps', () => {
    const behaviours = Object.fromEntries(
      Object.keys(BACS_TEST_ACCOUNTS).map((number) => {
        const b = bacsBehaviourOfLast4(number.slice(-4));
        return [number, b.kind === 'fail' ? `${b.code}${b.revokesMandate ? ' revokes' : ''}` : b.kind];
      }),
    );
    assert.deepEqual(behaviours, {
      '00012345': 'succeed',
      '90012345': 'succeed',
      '22222227': 'insufficient_funds',
      '92222227': 'insufficient_funds',
      '33333335': 'debit_not_authorized revokes',
      '93333335': 'debit_not_authorized revokes',
      '55555559': 'dispute',
      '00033333': 'mandate_refused',
      '00044444': 'invalid_account',
      '34343434': 'charge_exceeds_source_limit',
      '12121212': 'charge_exceeds_weekly_limit',
    });
  });
});

const details = (fields: Record<string, string>) =>
  parseForm(
    new URLSearchParams({
      type: 'bacs_debit',
      'bacs_debit[sort_code]': '10-88-00',
      'bacs_debit[account_number]': '00012345',
      'billing_details[name]': 'Pat Driver',
      'billing_details[email]': 'pat@example.com',
      'billing_details[address][line1]': '1 High Street',
      'billing_details[address][postal_code]': 'LS1 1AA',
      ...fields,
    }).toString(),
  );

function refusal(work: () => unknown): { code: string | undefined; param: string | undefined } {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof StripeApiError);
    return { code: error.body.error.code, param: error.body.error.param };
  }
  assert.fail('expected a refusal');
}

describe('reading bank details', () => {
  test('a test account becomes a payment method that keeps the sort code and last four digits, never the number', () => {
    const pm = readBacsPaymentMethod(details({}), '', 'cus_1', 1_800_000_000);
    assert.deepEqual(pm.bacs_debit.sort_code, '108800');
    assert.equal(pm.bacs_debit.last4, '2345');
    assert.equal(pm.billing_details.name, 'Pat Driver');
    assert.equal(pm.customer, 'cus_1');
    assert.doesNotMatch(JSON.stringify(pm), /00012345/);
    // One fingerprint per account, as on Stripe.
    const again = readBacsPaymentMethod(details({}), '', null, 1_800_000_001);
    assert.equal(again.bacs_debit.fingerprint, pm.bacs_debit.fingerprint);
    const other = readBacsPaymentMethod(details({ 'bacs_debit[account_number]': '22222227' }), '', null, 0);
    assert.notEqual(other.bacs_debit.fingerprint, pm.bacs_debit.fingerprint);
  });
  test('malformed or non-test numbers and missing payer details are refused, naming the field', () => {
    assert.deepEqual(
      refusal(() =>
        readBacsPaymentMethod(details({ 'bacs_debit[sort_code]': '1088' }), 'payment_method_data', null, 0),
      ),
      { code: 'invalid_sort_code', param: 'payment_method_data[bacs_debit][sort_code]' },
    );
    assert.deepEqual(
      refusal(() => readBacsPaymentMethod(details({ 'bacs_debit[account_number]': '1234567' }), '', null, 0)),
      { code: 'account_number_invalid', param: 'bacs_debit[account_number]' },
    );
    assert.equal(
      refusal(() => readBacsPaymentMethod(details({ 'bacs_debit[account_number]': '31926819' }), '', null, 0))
        .code,
      'payment_method_invalid_parameter_testmode',
    );
    assert.deepEqual(
      refusal(() =>
        readBacsPaymentMethod(details({ 'billing_details[email]': 'not-an-email' }), '', null, 0),
      ),
      { code: 'email_invalid', param: 'billing_details[email]' },
    );
    assert.deepEqual(
      refusal(() => readBacsPaymentMethod(details({ 'billing_details[address][line1]': ' ' }), '', null, 0)),
      { code: 'parameter_missing', param: 'billing_details[address][line1]' },
    );
  });
  test("the payer's acceptance of the mandate: online with the browser's details, or inferred from the client", () => {
    const form = (fields: Record<string, string>) => parseForm(new URLSearchParams(fields).toString());
    assert.deepEqual(
      readCustomerAcceptance(
        form({
          'customer_acceptance[type]': 'online',
          'customer_acceptance[online][ip_address]': '203.0.113.7',
          'customer_acceptance[online][user_agent]': 'Mozilla/5.0',
        }),
        1_800_000_000,
      ),
      {
        accepted_at: 1_800_000_000,
        online: { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0' },
        type: 'online',
      },
    );
    assert.equal(
      readCustomerAcceptance(
        form({
          'customer_acceptance[type]': 'online',
          'customer_acceptance[online][infer_from_client]': 'true',
        }),
        1,
      ).type,
      'online',
    );
    assert.equal(refusal(() => readCustomerAcceptance(undefined, 1)).code, 'parameter_missing');
    assert.equal(
      refusal(() => readCustomerAcceptance(form({ 'customer_acceptance[type]': 'online' }), 1)).code,
      'parameter_missing',
    );
  });
});
