import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { installmentPlanApr, installmentsApr } from './apr.ts';

/** The APR by the equation of present values, solved in binary floating point: an independent check. */
function reference(price: number, installment: number, count: number): number {
  const presentValue = (x: number) => {
    let sum = 0;
    for (let k = 0; k < count; k++) sum += installment * (1 + x) ** (-k / 12);
    return sum;
  };
  let [low, high] = [0, 1];
  while (presentValue(high) > price) high *= 2;
  for (let i = 0; i < 200; i++) {
    const middle = (low + high) / 2;
    if (presentValue(middle) > price) low = middle;
    else high = middle;
  }
  return low * 100;
}

describe('APR', () => {
  test('12 monthly installments loaded by 6 %, the first at the start: 13.7 %', () => {
    assert.equal(installmentPlanApr({ kind: 'monthly', installments: 12, loading_rate: '0.06' }), '13.7');
  });

  test('no loading is no interest; a repayment not above the price is 0.0', () => {
    assert.equal(installmentPlanApr({ kind: 'monthly', installments: 10, loading_rate: '0' }), '0.0');
    assert.equal(installmentsApr(1200, 100, 12), '0.0');
    assert.equal(installmentsApr(1200, 100, 1), '0.0');
  });

  test('£1,000 repaid by 12 installments of £90, the first at once: 18.6 %', () => {
    // Σ 90 × (1 + X)^(−k/12), k = 0…11, equals 1000 at X ≈ 0.18595.
    assert.equal(installmentsApr(1000, 90, 12), '18.6');
  });

  test('agrees with the equation solved independently, to one decimal place', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 1, max: 300_000 }), (n, loading) => {
        const total = 1 + loading / 1_000_000;
        const expected = reference(1, total / n, n);
        const apr = Number(
          installmentPlanApr({ kind: 'monthly', installments: n, loading_rate: String(loading / 1_000_000) }),
        );
        // Away from a rounding boundary the one-decimal figures agree exactly.
        if (Math.abs(((expected * 10) % 1) - 0.5) > 1e-6) assert.equal(apr, Math.round(expected * 10) / 10);
      }),
      { numRuns: 100 },
    );
  });

  test('more loading is never a lower APR', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 0, max: 500_000 }),
        fc.integer({ min: 0, max: 500_000 }),
        (n, a, b) => {
          const apr = (l: number) =>
            Number(
              installmentPlanApr({ kind: 'monthly', installments: n, loading_rate: String(l / 1_000_000) }),
            );
          const [low, high] = a <= b ? [a, b] : [b, a];
          assert.ok(apr(low) <= apr(high));
        },
      ),
      { numRuns: 50 },
    );
  });
});
