import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  addClaimAmounts,
  claimBordereauAmounts,
  onBordereau,
  ZERO_CLAIM_AMOUNTS,
} from './claims-bordereau.ts';

test('a claim’s month: reserved £1,000 before, raised £250 and paid £400 within', () => {
  const amounts = claimBordereauAmounts({
    movedBeforePence: 100_000,
    paidBeforePence: 0,
    movedInPence: 25_000,
    paidInPence: 40_000,
  });
  assert.deepEqual(amounts, {
    openingOutstandingPence: 100_000,
    reserveMovementsPence: 25_000,
    paymentsPence: 40_000,
    closingOutstandingPence: 85_000,
    paidToDatePence: 40_000,
    incurredPence: 125_000,
  });
});

test('a final payment’s release takes the closing reserve to nothing; incurred is what was paid', () => {
  // Reserve £500, paid £300 before; the final £120 within, and £80 left unpaid released.
  const amounts = claimBordereauAmounts({
    movedBeforePence: 50_000,
    paidBeforePence: 30_000,
    movedInPence: -8_000,
    paidInPence: 12_000,
  });
  assert.equal(amounts.openingOutstandingPence, 20_000);
  assert.equal(amounts.closingOutstandingPence, 0);
  assert.equal(amounts.incurredPence, 42_000);
});

test('a claim is on the month’s bordereau when something was outstanding or moved', () => {
  const none = { movedBeforePence: 0, paidBeforePence: 0, movedInPence: 0, paidInPence: 0 };
  assert.equal(onBordereau(none), false);
  assert.equal(
    onBordereau({ ...none, movedBeforePence: 100, paidBeforePence: 100 }),
    false,
    'settled before',
  );
  assert.equal(onBordereau({ ...none, movedBeforePence: 100 }), true);
  assert.equal(onBordereau({ ...none, movedInPence: 1 }), true);
  assert.equal(onBordereau({ ...none, paidInPence: 1 }), true);
});

const pence = fc.integer({ min: -10_000_000, max: 10_000_000 });
const sums = fc.record({
  movedBeforePence: pence,
  paidBeforePence: pence,
  movedInPence: pence,
  paidInPence: pence,
});

test('property: opening + movements − payments = closing, and one month’s closing opens the next', () => {
  fc.assert(
    fc.property(sums, pence, pence, (month, movedNext, paidNext) => {
      const a = claimBordereauAmounts(month);
      assert.equal(
        a.openingOutstandingPence + a.reserveMovementsPence - a.paymentsPence,
        a.closingOutstandingPence,
      );
      assert.equal(a.incurredPence, a.paidToDatePence + a.closingOutstandingPence);
      const next = claimBordereauAmounts({
        movedBeforePence: month.movedBeforePence + month.movedInPence,
        paidBeforePence: month.paidBeforePence + month.paidInPence,
        movedInPence: movedNext,
        paidInPence: paidNext,
      });
      assert.equal(next.openingOutstandingPence, a.closingOutstandingPence);
    }),
  );
});

test('property: the totals of rows are their column sums, and reconcile as each row does', () => {
  fc.assert(
    fc.property(fc.array(sums, { maxLength: 20 }), (claims) => {
      const rows = claims.map(claimBordereauAmounts);
      const totals = rows.reduce(addClaimAmounts, ZERO_CLAIM_AMOUNTS);
      assert.equal(
        totals.paymentsPence,
        rows.reduce((s, r) => s + r.paymentsPence, 0),
      );
      assert.equal(
        totals.openingOutstandingPence + totals.reserveMovementsPence - totals.paymentsPence,
        totals.closingOutstandingPence,
      );
    }),
  );
});
