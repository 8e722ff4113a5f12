import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../../platform/money.ts';
import { adjustmentAmountPence, cancellationAmountPence, remainingShare } from './payment-amounts.ts';
import { isHardDecline, nextAttemptAt } from './dunning.ts';

const DAY = 86_400;
const term = { startSeconds: 1_735_689_600, endSeconds: 1_735_689_600 + 365 * DAY }; // 2025-01-01 + 365 days

test('remaining share counts whole days and is clamped to the term', () => {
  assert.equal(remainingShare(term, term.startSeconds).toString(), '1');
  assert.equal(remainingShare(term, term.endSeconds).toString(), '0');
  assert.equal(
    remainingShare(term, term.startSeconds + 73 * DAY).toString(),
    new Decimal(292).dividedBy(365).toString(),
  );
  assert.equal(remainingShare(term, term.startSeconds - 10 * DAY).toString(), '1');
  assert.equal(remainingShare(term, term.endSeconds + 10 * DAY).toString(), '0');
});

test('adjustment: (new − old) × share + fee, rounded half-even once', () => {
  const half = new Decimal(1).dividedBy(2);
  assert.equal(
    adjustmentAmountPence({
      oldUpfrontPence: 10_000,
      newUpfrontPence: 12_000,
      mtaFeePence: 2_000,
      share: half,
    }),
    3_000,
  );
  assert.equal(
    adjustmentAmountPence({ oldUpfrontPence: 12_000, newUpfrontPence: 10_000, mtaFeePence: 0, share: half }),
    -1_000,
  );
  // 1 × 0.5 = 0.5 → 0 (half to even); 3 × 0.5 = 1.5 → 2.
  assert.equal(
    adjustmentAmountPence({ oldUpfrontPence: 0, newUpfrontPence: 1, mtaFeePence: 0, share: half }),
    0,
  );
  assert.equal(
    adjustmentAmountPence({ oldUpfrontPence: 0, newUpfrontPence: 3, mtaFeePence: 0, share: half }),
    2,
  );
});

test('cancellation: refund of the unused share less fees, never beyond what was paid', () => {
  const share = new Decimal(1).dividedBy(2);
  assert.equal(
    cancellationAmountPence({
      upfrontPence: 20_000,
      cancelFeePence: 2_500,
      adminFeePence: 500,
      share,
      refundablePence: 20_000,
    }),
    7_000,
  );
  assert.equal(
    cancellationAmountPence({
      upfrontPence: 20_000,
      cancelFeePence: 0,
      adminFeePence: 0,
      share,
      refundablePence: 4_000,
    }),
    4_000,
  );
  assert.equal(
    cancellationAmountPence({
      upfrontPence: 1_000,
      cancelFeePence: 2_500,
      adminFeePence: 500,
      share,
      refundablePence: 1_000,
    }),
    -2_500,
  );
});

test('property: refunds never exceed what was paid, and fees are applied exactly once', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 500_000 }),
      fc.integer({ min: 0, max: 20_000 }),
      fc.integer({ min: 0, max: 20_000 }),
      fc.integer({ min: 0, max: 365 }),
      fc.integer({ min: 0, max: 500_000 }),
      (upfront, cancelFee, adminFee, day, paid) => {
        const share = remainingShare(term, term.startSeconds + day * DAY);
        const amount = cancellationAmountPence({
          upfrontPence: upfront,
          cancelFeePence: cancelFee,
          adminFeePence: adminFee,
          share,
          refundablePence: paid,
        });
        assert.ok(amount <= Math.max(0, paid), 'never refunds more than paid');
        const uncapped = cancellationAmountPence({
          upfrontPence: upfront,
          cancelFeePence: cancelFee,
          adminFeePence: adminFee,
          share,
          refundablePence: Number.MAX_SAFE_INTEGER,
        });
        const noFees = cancellationAmountPence({
          upfrontPence: upfront,
          cancelFeePence: 0,
          adminFeePence: 0,
          share,
          refundablePence: Number.MAX_SAFE_INTEGER,
        });
        assert.equal(noFees - uncapped, cancelFee + adminFee, 'fees applied once');
        assert.ok(Number.isInteger(amount));
      },
    ),
  );
});

test('dunning: retries on days 1, 3, 5, 7 after the first failure; hard declines wait for a new card', () => {
  const first = new Date('2025-03-01T02:00:00Z');
  assert.equal(nextAttemptAt(first, 1, false)?.toISOString(), '2025-03-02T02:00:00.000Z');
  assert.equal(nextAttemptAt(first, 4, false)?.toISOString(), '2025-03-08T02:00:00.000Z');
  assert.equal(nextAttemptAt(first, 5, false), null);
  assert.equal(nextAttemptAt(first, 1, true), null);
  assert.equal(isHardDecline('expired_card', null), true);
  assert.equal(isHardDecline('card_declined', 'insufficient_funds'), false);
});
