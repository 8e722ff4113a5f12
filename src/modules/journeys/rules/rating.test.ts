import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../../platform/money.ts';
import { distanceUnitsLabel, totalKilometres, totalMiles, usagePremiumPence } from './rating.ts';

describe('usagePremiumPence', () => {
  test('rate × distance in the product unit, in pence', () => {
    const cases: Array<[rate: string, metres: number, unit: 'mile' | 'km', pence: number]> = [
      ['0.045', 1609, 'mile', 4], // 4.49972… p
      ['0.045', 16_093, 'mile', 45], // 44.99916… p
      ['0.04', 160_934, 'mile', 400], // 399.99900… p
      ['0.10', 0, 'mile', 0],
      ['0.10', 1000, 'km', 10],
      ['0.123456', 12_345, 'km', 152], // 152.4064… p
      ['1000', 100_000_000, 'km', 10_000_000_000], // the largest rate over 100,000 km
    ];
    for (const [rate, metres, unit, pence] of cases)
      assert.equal(usagePremiumPence(rate, metres, unit), pence, `${rate} × ${metres} m per ${unit}`);
  });

  test('exact halves go to the even penny', () => {
    // 0.05 per km × 100 m = 0.5 p → 0; × 300 m = 1.5 p → 2; × 500 m = 2.5 p → 2.
    assert.equal(usagePremiumPence('0.05', 100, 'km'), 0);
    assert.equal(usagePremiumPence('0.05', 300, 'km'), 2);
    assert.equal(usagePremiumPence('0.05', 500, 'km'), 2);
    // Per mile: 0.000005 × 1,609,344 m (1,000 miles) = 0.5 p → 0; × 3,000 miles = 1.5 p → 2; × 5,000 = 2.5 p → 2.
    assert.equal(usagePremiumPence('0.000005', 1_609_344, 'mile'), 0);
    assert.equal(usagePremiumPence('0.000005', 4_828_032, 'mile'), 2);
    assert.equal(usagePremiumPence('0.000005', 8_046_720, 'mile'), 2);
  });

  test('a number rate is read through its decimal text, not its binary value', () => {
    // 0.045 is 0.04499999999999999833… in binary; through its text it is exactly 0.045.
    assert.equal(usagePremiumPence(0.045, 1_000_000, 'km'), 4500);
    assert.equal(usagePremiumPence(0.29, 500, 'km'), 14); // 14.5 p → 14 (0.29 in binary is below)
  });

  test('equals one half-even rounding of the exact rational (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000_000 }), // rate in millionths, up to 1,000 per unit
        fc.integer({ min: 0, max: 100_000_000 }), // up to 100,000 km
        fc.constantFrom<'mile' | 'km'>('mile', 'km'),
        (micro, metres, unit) => {
          const rate = new Decimal(micro).dividedBy(1_000_000).toFixed();
          // pence = (micro / 10^6) × metres / (metres per unit) × 100, as a fraction of integers:
          // micro × metres / 10^7 per km, micro × metres / 16,093,440 per mile (1,609.344 m).
          const numerator = BigInt(micro) * BigInt(metres);
          const denominator = unit === 'km' ? 10_000_000n : 16_093_440n;
          const quotient = numerator / denominator;
          const twiceRemainder = 2n * (numerator % denominator);
          const expected =
            twiceRemainder > denominator || (twiceRemainder === denominator && quotient % 2n === 1n)
              ? quotient + 1n
              : quotient;
          assert.equal(usagePremiumPence(rate, metres, unit), Number(expected));
        },
      ),
    );
  });

  test('refuses what is not a distance or a rate', () => {
    assert.throws(() => usagePremiumPence('0.04', 1.5, 'mile'), RangeError);
    assert.throws(() => usagePremiumPence('0.04', -1, 'mile'), RangeError);
    assert.throws(() => usagePremiumPence('-0.04', 1, 'mile'), RangeError);
  });
});

describe('distances shown', () => {
  test('miles and kilometres to 2 decimals, half-even', () => {
    assert.equal(totalMiles(1609), 1); // 0.99978…
    assert.equal(totalMiles(16_093), 10); // 9.99979…
    assert.equal(totalMiles(12_345), 7.67); // 7.67085…
    assert.equal(totalKilometres(12_345), 12.34); // 12.345: the half goes to the even 4
    assert.equal(totalKilometres(12_355), 12.36);
  });

  test('the integer path equals decimal arithmetic, and so does the decimal path beyond it (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.nat(), fc.integer({ min: 90_000_000_000, max: Number.MAX_SAFE_INTEGER })),
        (metres) => {
          const expect = (per: string) =>
            new Decimal(metres).dividedBy(per).toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN).toNumber();
          assert.equal(totalMiles(metres), expect('1609.344'));
          assert.equal(totalKilometres(metres), expect('1000'));
        },
      ),
    );
    assert.equal(totalKilometres(5), 0); // 0.005 → 0.00
    assert.equal(totalKilometres(15), 0.02); // 0.015 → 0.02
  });

  test('labels', () => {
    assert.equal(distanceUnitsLabel('mile'), 'miles');
    assert.equal(distanceUnitsLabel('km'), 'kms');
  });
});
