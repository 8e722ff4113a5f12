import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../../platform/money.ts';
import { splitPremium, totalSplit } from './premium-split.ts';

const gross = fc.integer({ min: -10_000_000, max: 10_000_000 });
const rate = fc.oneof(
  fc.constantFrom(0, 5, 12, 20, 9.5, '12.5'),
  fc.integer({ min: 0, max: 10_000 }).map((n) => n / 100),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => String(new Decimal(n).dividedBy(10_000))),
);

describe('splitPremium', () => {
  test('a worked example: £120.00 with 12 % IPT and 20 % commission', () => {
    // IPT 12000 × 12 ÷ 112 = 1285.71 → 1286; net of IPT 10714; commission 2142.8 → 2143; net 8571.
    assert.deepEqual(splitPremium(12_000, 12, 20), {
      grossPence: 12_000,
      iptPence: 1286,
      commissionPence: 2143,
      netPence: 8571,
    });
  });

  test('halves round to even, once per amount', () => {
    // 112 × 12 ÷ 112 = 12 exactly; 1 × 50 ÷ 100 = 0.5 → 0 (even); 3 × 50 ÷ 100 = 1.5 → 2 (even).
    assert.equal(splitPremium(112, 12, 0).iptPence, 12);
    assert.equal(splitPremium(1, 0, 50).commissionPence, 0);
    assert.equal(splitPremium(3, 0, 50).commissionPence, 2);
    assert.equal(splitPremium(5, 0, 50).commissionPence, 2);
  });

  test('the parts add up to the gross to the penny, each within half a penny of the exact amount', () => {
    fc.assert(
      fc.property(gross, rate, rate, (g, ipt, commission) => {
        const split = splitPremium(g, ipt, commission);
        assert.equal(split.iptPence + split.commissionPence + split.netPence, g);
        const exactIpt = new Decimal(g).times(String(ipt)).dividedBy(new Decimal(String(ipt)).plus(100));
        assert.ok(exactIpt.minus(split.iptPence).abs().lessThanOrEqualTo(0.5));
        const exactCommission = new Decimal(g - split.iptPence).times(String(commission)).dividedBy(100);
        assert.ok(exactCommission.minus(split.commissionPence).abs().lessThanOrEqualTo(0.5));
      }),
    );
  });

  test('exactly the decimal computation, rounded half to even', () => {
    const reference = (g: number, ipt: number | string, commission: number | string) => {
      const magnitude = new Decimal(Math.abs(g));
      const iptPence = magnitude
        .times(String(ipt))
        .dividedBy(new Decimal(String(ipt)).plus(100))
        .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN);
      const commissionPence = magnitude
        .minus(iptPence)
        .times(String(commission))
        .dividedBy(100)
        .toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN);
      return [iptPence.toNumber(), commissionPence.toNumber()];
    };
    fc.assert(
      fc.property(gross, rate, rate, (g, ipt, commission) => {
        const split = splitPremium(g, ipt, commission);
        assert.deepEqual(
          [Math.abs(split.iptPence), Math.abs(split.commissionPence)],
          reference(g, ipt, commission),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  test('a refund is the mirror of its charge', () => {
    fc.assert(
      fc.property(gross, rate, rate, (g, ipt, commission) => {
        const charge = splitPremium(g, ipt, commission);
        const refund = splitPremium(-g, ipt, commission);
        assert.deepEqual(
          [refund.iptPence, refund.commissionPence, refund.netPence],
          [-charge.iptPence || 0, -charge.commissionPence || 0, -charge.netPence || 0],
        );
      }),
    );
  });

  test('totals are the sums of the rounded rows, and reconcile with the gross', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(gross, rate, rate), { maxLength: 200 }), (rows) => {
        const splits = rows.map(([g, ipt, commission]) => splitPremium(g, ipt, commission));
        const total = totalSplit(splits);
        assert.equal(
          total.grossPence,
          rows.reduce((sum, [g]) => sum + g, 0),
        );
        assert.equal(total.iptPence + total.commissionPence + total.netPence, total.grossPence);
      }),
    );
  });

  test('rates outside 0–100 and fractional pence are refused', () => {
    assert.throws(() => splitPremium(100, -1, 0), RangeError);
    assert.throws(() => splitPremium(100, 0, 101), RangeError);
    assert.throws(() => splitPremium(100.5, 12, 0), RangeError);
    assert.deepEqual(splitPremium(100, null, undefined), {
      grossPence: 100,
      iptPence: 0,
      commissionPence: 0,
      netPence: 100,
    });
  });
});
