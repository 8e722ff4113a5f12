import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstPaymentPence, prepaidInstallments } from './prepaid-installments.ts';

const monthly = { upfront_premium: 0, subscription_premium: 10.5, subscription_installments: 12 };

test('a payment beyond the upfront premium and deposit pays whole installments of the first term', () => {
  assert.deepEqual(prepaidInstallments(monthly, undefined), { ok: true, count: 0 });
  assert.deepEqual(prepaidInstallments(monthly, 0), { ok: true, count: 0 });
  assert.deepEqual(prepaidInstallments(monthly, 10.5), { ok: true, count: 1 });
  assert.deepEqual(prepaidInstallments(monthly, 21), { ok: true, count: 2 });
  assert.deepEqual(prepaidInstallments({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 35.5), {
    ok: true,
    count: 1,
  });
  // Up to the upfront premium and deposit, as before: nothing of the plan is paid.
  assert.deepEqual(prepaidInstallments({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 25), {
    ok: true,
    count: 0,
  });
});

test('part of an installment, or more installments than the plan has, is refused', () => {
  assert.equal(prepaidInstallments(monthly, 12).ok, false);
  assert.equal(prepaidInstallments(monthly, 10.5 * 13).ok, false);
});

test('a single plan pays its upfront premium: a larger payment pays no installment', () => {
  const single = { upfront_premium: 300, subscription_premium: 0, subscription_installments: 0 };
  assert.deepEqual(prepaidInstallments(single, 350), { ok: true, count: 0 });
  assert.equal(firstPaymentPence(single, 0), 30_000);
});

test('the first payment of a monthly plan: upfront, deposit and the installments paid, in pence', () => {
  assert.equal(firstPaymentPence({ ...monthly, upfront_premium: 20, deposit_fee: 5 }, 1), 3550);
  assert.equal(firstPaymentPence(monthly, 1), 1050);
});
