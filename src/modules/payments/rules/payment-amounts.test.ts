import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../../platform/money.ts';
import {
  adjustmentAmountPence,
  cancellationAmountPence,
  inCoolingOff,
  remainingShare,
} from './payment-amounts.ts';
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
      coolingOff: false,
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
      coolingOff: false,
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
      coolingOff: false,
    }),
    -2_500,
  );
});

test('cancellation in the cooling-off period: the unused share back, no cancellation or admin fee (ICOBS 7.2.1R)', () => {
  const share = new Decimal(350).dividedBy(365);
  const fees = { upfrontPence: 36_500, cancelFeePence: 5_000, adminFeePence: 2_500, share };
  assert.equal(cancellationAmountPence({ ...fees, refundablePence: 36_500, coolingOff: true }), 35_000);
  assert.equal(cancellationAmountPence({ ...fees, refundablePence: 36_500, coolingOff: false }), 27_500);
  // Never beyond what was paid, in the period too.
  assert.equal(cancellationAmountPence({ ...fees, refundablePence: 20_000, coolingOff: true }), 20_000);
});

test('the cooling-off period: 14 London days from the later of the conclusion and the start of cover', () => {
  const at = (iso: string) => new Date(iso);
  // Concluded 10:00 on 1 March 2024 (GMT), cover from then: the period ends with 15 March, London time.
  const march = { concludedAt: at('2024-03-01T10:00:00Z'), startAt: at('2024-03-01T10:00:00Z') };
  assert.equal(inCoolingOff(march, at('2024-03-15T23:59:59Z')), true);
  assert.equal(inCoolingOff(march, at('2024-03-16T00:00:00Z')), false);
  // Across the change to BST (31 March 2024): 00:30 BST on 14 April is still 13 April in UTC.
  const bst = { concludedAt: at('2024-03-30T12:00:00Z'), startAt: at('2024-03-30T12:00:00Z') };
  assert.equal(inCoolingOff(bst, at('2024-04-13T22:59:59Z')), true);
  assert.equal(inCoolingOff(bst, at('2024-04-13T23:00:00Z')), false);
  // Concluded on 20 February of a leap year: 29 February counts as a day, so the period ends 5 March.
  const leap = { concludedAt: at('2024-02-20T09:00:00Z'), startAt: at('2024-02-20T09:00:00Z') };
  assert.equal(inCoolingOff(leap, at('2024-03-05T12:00:00Z')), true);
  assert.equal(inCoolingOff(leap, at('2024-03-06T00:00:00Z')), false);
  // Bought on 31 December for cover from 00:00 London on 1 January: 14 days from the start, to 15 January.
  const yearEnd = { concludedAt: at('2025-12-31T15:00:00Z'), startAt: at('2026-01-01T00:00:00Z') };
  assert.equal(inCoolingOff(yearEnd, at('2026-01-15T20:00:00Z')), true);
  assert.equal(inCoolingOff(yearEnd, at('2026-01-16T00:00:01Z')), false);
  // Cover backdated before the purchase: the period runs from the purchase.
  const backdated = { concludedAt: at('2025-08-01T12:00:00Z'), startAt: at('2025-05-31T23:00:00Z') };
  assert.equal(inCoolingOff(backdated, at('2025-08-15T12:00:00Z')), true);
  assert.equal(inCoolingOff(backdated, at('2025-08-15T23:00:00Z')), false);
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
          coolingOff: false,
        });
        assert.ok(amount <= Math.max(0, paid), 'never refunds more than paid');
        const uncapped = cancellationAmountPence({
          upfrontPence: upfront,
          cancelFeePence: cancelFee,
          adminFeePence: adminFee,
          share,
          refundablePence: Number.MAX_SAFE_INTEGER,
          coolingOff: false,
        });
        const noFees = cancellationAmountPence({
          upfrontPence: upfront,
          cancelFeePence: 0,
          adminFeePence: 0,
          share,
          refundablePence: Number.MAX_SAFE_INTEGER,
          coolingOff: false,
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
