import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { firstPaymentPence } from '../../policies/rules/index.ts';
import { fromPence } from '../../../platform/money.ts';
import {
  addAmounts,
  addAmountsInto,
  bordereauAmounts,
  nextMonth,
  postcodeDistrict,
  ZERO_AMOUNTS,
  type BordereauAmounts,
  type BordereauSource,
  type BordereauVersionType,
} from './bordereau-amounts.ts';

const DAY = 86_400;
// A term of 365 days from 2025-06-01 00:00 London, as the API's example has it.
const START = 1_748_732_400;
const END = START + 365 * DAY - 1;
const at = (day: number) => new Date((START + day * DAY) * 1000);

const base: BordereauSource = {
  versionType: 'nb',
  effectiveAt: at(0),
  upfrontPence: 9550,
  mtaFeePence: 2000,
  prepaid: { installments: 0, installmentPence: 2999, depositFeePence: 500 },
  iptRate: '12',
  commissionRate: '15',
  previous: null,
  cancellation: null,
  statement: null,
};
const previous = {
  upfrontPence: 9550,
  termStartSeconds: START,
  termEndSeconds: END,
  cancelFeePence: 5000,
  adminFeePence: 2500,
};
const statement = {
  subscriptionPence: 2999,
  usagePence: 1234,
  capCreditPence: 200,
  annualCapCreditPence: 0,
  freeDistanceCreditPence: 100,
  minimumTopUpPence: 50,
  scoreAdjustmentPence: 0,
  creditsUsedPence: 750,
};

const MONEY_KEYS: ReadonlyArray<keyof BordereauAmounts> = [
  'upfrontPence',
  'subscriptionPence',
  'usagePence',
  'capsCreditPence',
  'creditsUsedPence',
  'feesPence',
  'grossPence',
  'iptPence',
  'commissionPence',
  'netPence',
];

describe('bordereauAmounts', () => {
  test('nb and rn: the version’s upfront premium, split; no fees', () => {
    for (const versionType of ['nb', 'rn'] as const) {
      const row = bordereauAmounts({ ...base, versionType });
      assert.equal(row.upfrontPence, 9550);
      assert.equal(row.grossPence, 9550);
      // 9550 × 12 ÷ 112 = 1023.21 → 1023; 15 % of 8527 = 1279.05 → 1279; net 7248.
      assert.deepEqual(
        [row.iptPence, row.commissionPence, row.netPence, row.feesPence],
        [1023, 1279, 7248, 0],
      );
    }
  });

  test('nb bought monthly: the installments paid at binding on the row, split with the rest; the deposit a fee', () => {
    // The web app's monthly purchase: no upfront premium, the first installment of £55.33 paid at binding.
    const prepaid = { installments: 1, installmentPence: 5533, depositFeePence: 500 };
    const row = bordereauAmounts({ ...base, upfrontPence: 0, prepaid });
    assert.deepEqual([row.upfrontPence, row.subscriptionPence, row.grossPence], [0, 5533, 5533]);
    // 5533 × 12 ÷ 112 = 592.82 → 593; 15 % of 4940 = 741; net 4199; the deposit beside, not split.
    assert.deepEqual([row.iptPence, row.commissionPence, row.netPence, row.feesPence], [593, 741, 4199, 500]);
    const withUpfront = bordereauAmounts({ ...base, prepaid: { ...prepaid, installments: 2 } });
    assert.deepEqual([withUpfront.upfrontPence, withUpfront.subscriptionPence], [9550, 11_066]);
    assert.equal(withUpfront.grossPence, 9550 + 11_066);
    // A renewed term bills all of its installments by statement: its row is its upfront premium alone.
    const renewal = bordereauAmounts({ ...base, versionType: 'rn', prepaid });
    assert.deepEqual([renewal.subscriptionPence, renewal.feesPence, renewal.grossPence], [0, 0, 9550]);
  });

  test('mta: the change of upfront premium × the share of the term left, the MTA fee beside', () => {
    // From day 14 (15 June): 351 of 365 days left; (12000 − 9550) × 351/365 = 2356.03 → 2356.
    const row = bordereauAmounts({
      ...base,
      versionType: 'mta',
      effectiveAt: at(14),
      upfrontPence: 12_000,
      previous,
    });
    assert.deepEqual([row.upfrontPence, row.feesPence, row.grossPence], [2356, 2000, 2356]);
    const down = bordereauAmounts({
      ...base,
      versionType: 'mta',
      effectiveAt: at(14),
      upfrontPence: 8000,
      previous,
    });
    assert.ok(down.upfrontPence < 0 && down.netPence < 0, 'a lower premium returns premium');
    const same = bordereauAmounts({ ...base, versionType: 'mta', effectiveAt: at(100), previous });
    assert.equal(same.grossPence, 0);
  });

  test('cn: minus the previous upfront premium × the share left; cancel and admin fees beside', () => {
    // From day 24 (25 June): 341 of 365 left; 9550 × 341/365 = 8922.05 → 8922.
    const row = bordereauAmounts({ ...base, versionType: 'cn', effectiveAt: at(24), previous });
    assert.deepEqual([row.upfrontPence, row.feesPence], [-8922, 7500]);
    assert.equal(row.iptPence + row.commissionPence + row.netPence, row.grossPence);
    const fromInception = bordereauAmounts({ ...base, versionType: 'cn', effectiveAt: at(-3), previous });
    assert.equal(fromInception.upfrontPence, -9550, 'cancelled from inception: all of it back');
    const atEnd = bordereauAmounts({ ...base, versionType: 'cn', effectiveAt: at(365), previous });
    assert.equal(atEnd.upfrontPence, 0);
  });

  test('cn in the cooling-off period: the same return premium, and no fee kept', () => {
    const concludedAt = at(-10);
    const inPeriod = bordereauAmounts({
      ...base,
      versionType: 'cn',
      effectiveAt: at(14),
      previous,
      cancellation: { concludedAt, notifiedAt: at(14) },
    });
    // From day 14: 351 of 365 left; 9550 × 351/365 = 9183.7 → 9184; 14 days from the start (it is later).
    assert.deepEqual([inPeriod.upfrontPence, inPeriod.feesPence], [-9184, 0]);
    const after = bordereauAmounts({
      ...base,
      versionType: 'cn',
      effectiveAt: at(15),
      previous,
      cancellation: { concludedAt, notifiedAt: at(15) },
    });
    assert.equal(after.feesPence, 7500);
  });

  test('ls: every amount 0', () => {
    assert.deepEqual(bordereauAmounts({ ...base, versionType: 'ls', previous, statement }), ZERO_AMOUNTS);
  });

  test('st: the statement’s lines; caps less the minimum top-up; credits used shown, not deducted', () => {
    const row = bordereauAmounts({ ...base, versionType: 'st', upfrontPence: null, statement });
    assert.equal(row.upfrontPence, 0);
    assert.equal(row.capsCreditPence, 250);
    assert.equal(row.creditsUsedPence, 750);
    assert.equal(row.grossPence, 2999 + 1234 - 250);
    assert.equal(row.feesPence, 0);
    // A score discount is taken off the usage like a cap; a surcharge adds to it.
    const discounted = bordereauAmounts({
      ...base,
      versionType: 'st',
      upfrontPence: null,
      statement: { ...statement, scoreAdjustmentPence: -123 },
    });
    assert.equal(discounted.capsCreditPence, 250 + 123);
    assert.equal(discounted.grossPence, 2999 + 1234 - 250 - 123);
  });
});

describe('postcodeDistrict and nextMonth', () => {
  test('the outward code', () => {
    assert.equal(postcodeDistrict('SW1A 1AA'), 'SW1A');
    assert.equal(postcodeDistrict('ec1a1bb'), 'EC1A');
    assert.equal(postcodeDistrict('M1 1AE'), 'M1');
    assert.equal(postcodeDistrict('D02 X285'), 'D02');
    assert.equal(postcodeDistrict(''), null);
    assert.equal(postcodeDistrict(null), null);
  });
  test('the month after', () => {
    assert.equal(nextMonth('2025-06'), '2025-07');
    assert.equal(nextMonth('2025-12'), '2026-01');
    assert.equal(nextMonth('2025-09'), '2025-10');
  });
});

const pence = fc.integer({ min: 0, max: 500_000 });
const rate = fc.oneof(
  fc.constantFrom<string | null>('0', '12', '20', '9.5', null),
  fc.integer({ min: 0, max: 3000 }).map((n) => String(n / 100)),
);
const versionType = fc.constantFrom<BordereauVersionType>('nb', 'mta', 'cn', 'rn', 'ls', 'st');
const source: fc.Arbitrary<BordereauSource> = fc.record({
  versionType,
  effectiveAt: fc.integer({ min: -10, max: 400 }).map(at),
  upfrontPence: pence,
  mtaFeePence: fc.integer({ min: 0, max: 5000 }),
  prepaid: fc.record({
    installments: fc.integer({ min: 0, max: 12 }),
    installmentPence: fc.integer({ min: 0, max: 100_000 }),
    depositFeePence: fc.integer({ min: 0, max: 5000 }),
  }),
  iptRate: rate,
  commissionRate: rate,
  previous: fc.option(
    fc.record({
      upfrontPence: pence,
      termStartSeconds: fc.constant(START),
      termEndSeconds: fc.constant(END),
      cancelFeePence: fc.integer({ min: 0, max: 10_000 }),
      adminFeePence: fc.integer({ min: 0, max: 10_000 }),
    }),
  ),
  cancellation: fc.constant(null),
  statement: fc.option(
    fc.record({
      subscriptionPence: pence,
      usagePence: pence,
      capCreditPence: fc.integer({ min: 0, max: 50_000 }),
      annualCapCreditPence: fc.integer({ min: 0, max: 50_000 }),
      freeDistanceCreditPence: fc.integer({ min: 0, max: 50_000 }),
      minimumTopUpPence: fc.integer({ min: 0, max: 5000 }),
      scoreAdjustmentPence: fc.integer({ min: -5000, max: 5000 }),
      creditsUsedPence: fc.integer({ min: 0, max: 50_000 }),
    }),
  ),
});

describe('a generated month of versions', () => {
  test('every row splits to its gross; the totals are the sums of the rows, column by column', () => {
    fc.assert(
      fc.property(fc.array(source, { maxLength: 200 }), (month) => {
        const rows = month.map(bordereauAmounts);
        const totals = rows.reduce(addAmounts, ZERO_AMOUNTS);
        for (const row of rows) {
          assert.equal(row.iptPence + row.commissionPence + row.netPence, row.grossPence);
          assert.equal(
            row.upfrontPence + row.subscriptionPence + row.usagePence - row.capsCreditPence,
            row.grossPence,
          );
          for (const key of MONEY_KEYS) assert.ok(Number.isSafeInteger(row[key]), key);
        }
        for (const key of MONEY_KEYS)
          assert.equal(
            totals[key],
            rows.reduce((sum, row) => sum + row[key], 0),
            key,
          );
        assert.equal(totals.iptPence + totals.commissionPence + totals.netPence, totals.grossPence);
        const inPlace = { ...ZERO_AMOUNTS };
        for (const row of rows) addAmountsInto(inPlace, row);
        assert.deepEqual(inPlace, totals, 'in place, the same sums');
      }),
      { numRuns: 300 },
    );
  });

  test('nb: the row’s premium and fees are the payment at binding that paid installments, to the penny', () => {
    fc.assert(
      fc.property(
        pence,
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 5000 }),
        rate,
        rate,
        (upfrontPence, installmentPence, installments, depositFeePence, iptRate, commissionRate) => {
          const row = bordereauAmounts({
            ...base,
            upfrontPence,
            iptRate,
            commissionRate,
            prepaid: { installments, installmentPence, depositFeePence },
          });
          const paid = firstPaymentPence(
            {
              upfront_premium: fromPence(upfrontPence),
              subscription_premium: fromPence(installmentPence),
              subscription_installments: 12,
              deposit_fee: fromPence(depositFeePence),
            },
            installments,
          );
          assert.equal(row.grossPence + row.feesPence, paid);
          assert.equal(row.iptPence + row.commissionPence + row.netPence, row.grossPence);
        },
      ),
    );
  });

  test('a cancellation returns no more than the premium; an adjustment and its reverse cancel exactly', () => {
    fc.assert(
      fc.property(pence, pence, fc.integer({ min: -10, max: 400 }), (oldPence, newPence, day) => {
        const cn = bordereauAmounts({
          ...base,
          versionType: 'cn',
          effectiveAt: at(day),
          previous: { ...previous, upfrontPence: oldPence },
        });
        assert.ok(cn.upfrontPence <= 0 && -cn.upfrontPence <= oldPence);
        const up = bordereauAmounts({
          ...base,
          versionType: 'mta',
          effectiveAt: at(day),
          upfrontPence: newPence,
          previous: { ...previous, upfrontPence: oldPence },
        });
        const down = bordereauAmounts({
          ...base,
          versionType: 'mta',
          effectiveAt: at(day),
          upfrontPence: oldPence,
          previous: { ...previous, upfrontPence: newPence },
        });
        // Half-even rounding of x and −x is symmetric: the two adjustments cancel exactly.
        assert.equal(up.upfrontPence + down.upfrontPence, 0);
      }),
    );
  });
});
