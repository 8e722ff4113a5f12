import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstPaymentPence, prepaidInstallments } from './prepaid-installments.ts';

const monthly = { upfront_premium: 0, subscription_premium: 10.5, subscription_installments: 12 };

test('a payment beyond the upfront premium and deposit pays whole installments of the first term', () => {
  assert.equal(prepaidInstallments(monthly, undefined), 0);
  assert.equal(prepaidInstallments(monthly, 0), 0);
  assert.equal(prepaidInstallments(monthly, 10.5), 1);
  assert.equal(prepaidInstallments(monthly, 21), 2);
  assert.equal(prepaidInstallments({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 35.5), 1);
  // Up to the upfront premium and deposit, as before: nothing of the plan is paid.
  assert.equal(prepaidInstallments({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 25), 0);
});

test('part of an installment, or more installments than the plan has, pays none: the plan is billed in full', () => {
  assert.equal(prepaidInstallments(monthly, 12), 0);
  assert.equal(prepaidInstallments(monthly, 10.5 * 13), 0);
});

test('a single plan pays its upfront premium: a larger payment pays no installment', () => {
  const single = { upfront_premium: 300, subscription_premium: 0, subscription_installments: 0 };
  assert.equal(prepaidInstallments(single, 350), 0);
  assert.equal(firstPaymentPence(single, 0), 30_000);
});

test('the first payment of a monthly plan: upfront, deposit and the installments paid, in pence', () => {
  assert.equal(firstPaymentPence({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 1), 3550);
  assert.equal(firstPaymentPence(monthly, 1), 1050);
});
