import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  adjustmentPence,
  applyDues,
  bandBasisPoints,
  monthAdjustment,
  type ScorePricingRule,
} from './score-adjustment.ts';

const RULE: ScorePricingRule = {
  bands: [
    { min_score: 90, adjustment_percent: -10 },
    { min_score: 50, adjustment_percent: 0 },
    { min_score: 0, adjustment_percent: 10 },
  ],
  cap_percent: 15,
};

const bands = fc.array(
  fc.record({
    min_score: fc.integer({ min: 0, max: 100 }),
    adjustment_percent: fc.integer({ min: -5000, max: 5000 }).map((bp) => bp / 100),
  }),
  { maxLength: 6 },
);
const rules = fc.record({ bands, cap_percent: fc.integer({ min: 0, max: 5000 }).map((bp) => bp / 100) });
const scores = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 0, max: 1000 }).map((tenths) => tenths / 10),
);

describe('score bands', () => {
  test('the band with the highest min_score at or below the score; none below every band', () => {
    assert.equal(bandBasisPoints(95, RULE), -1000);
    assert.equal(bandBasisPoints(90, RULE), -1000);
    assert.equal(bandBasisPoints(89.9, RULE), 0);
    assert.equal(bandBasisPoints(49.9, RULE), 1000);
    assert.equal(bandBasisPoints(null, RULE), 0);
    assert.equal(
      bandBasisPoints(40, { bands: [{ min_score: 50, adjustment_percent: 5 }], cap_percent: 10 }),
      0,
    );
  });

  test('the cap bounds the percentage either way', () => {
    fc.assert(
      fc.property(scores, rules, (score, rule) => {
        assert.ok(Math.abs(bandBasisPoints(score, rule)) <= Math.round(rule.cap_percent * 100));
      }),
    );
  });
});

describe('adjustmentPence', () => {
  test('exact, rounded once half to even', () => {
    assert.equal(adjustmentPence(12_345, -1000), -1234); // −1,234.5 → −1,234 (even)
    assert.equal(adjustmentPence(12_355, -1000), -1236); // −1,235.5 → −1,236 (even)
    assert.equal(adjustmentPence(1_005, 750), 75); // 75.375 → 75
    assert.equal(adjustmentPence(1_000, 750), 75);
    assert.equal(adjustmentPence(0, 1000), 0);
  });

  test('within half a penny of the exact product, and odd in the percentage', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: -10_000, max: 10_000 }),
        (p, bp) => {
          const pence = adjustmentPence(p, bp);
          assert.ok(Number.isSafeInteger(pence));
          // 20,000 × |pence − exact| ≤ 10,000, in integers.
          assert.ok(Math.abs(pence * 10_000 - p * bp) <= 5_000);
          assert.equal(adjustmentPence(p, -bp), -pence || 0);
        },
      ),
    );
  });
});

describe('monthAdjustment', () => {
  test('a disputed month is deferred; after it, the next statement adjusts the whole month', () => {
    assert.deepEqual(
      monthAdjustment(
        { billedUsagePence: 5_000, score: 92, disputed: true, provisional: false, adjustedPence: 0 },
        RULE,
      ),
      { deferred: true },
    );
    assert.deepEqual(
      monthAdjustment(
        { billedUsagePence: 5_000, score: 92, disputed: false, provisional: false, adjustedPence: 0 },
        RULE,
      ),
      { deferred: false, duePence: -500, basisPoints: -1000 },
    );
  });

  test('a dispute upheld after billing moves the next statement by the difference, never twice', () => {
    // Billed at 85 (no adjustment); a harsh brake taken out lifts the month to 91: a 10 % credit next time.
    const first = monthAdjustment(
      { billedUsagePence: 4_321, score: 85, disputed: false, provisional: false, adjustedPence: 0 },
      RULE,
    );
    assert.deepEqual(first, { deferred: false, duePence: 0, basisPoints: 0 });
    const next = monthAdjustment(
      { billedUsagePence: 4_321, score: 91, disputed: false, provisional: false, adjustedPence: 0 },
      RULE,
    );
    assert.deepEqual(next, { deferred: false, duePence: -432, basisPoints: -1000 });
    const again = monthAdjustment(
      { billedUsagePence: 4_321, score: 91, disputed: false, provisional: false, adjustedPence: -432 },
      RULE,
    );
    assert.deepEqual(again, { deferred: false, duePence: 0, basisPoints: -1000 });
  });

  test('whatever the statements and scores in between, what was adjusted adds up to the final target', () => {
    const step = fc.record({
      usage: fc.integer({ min: 0, max: 100_000 }),
      score: scores,
      disputed: fc.boolean(),
      provisional: fc.boolean(),
    });
    fc.assert(
      fc.property(
        rules,
        fc.array(step, { minLength: 1, maxLength: 8 }),
        scores,
        (rule, steps, finalScore) => {
          let billed = 0;
          let adjusted = 0;
          for (const s of steps) {
            billed += s.usage;
            const due = monthAdjustment(
              {
                billedUsagePence: billed,
                score: s.score,
                disputed: s.disputed,
                provisional: s.provisional,
                adjustedPence: adjusted,
              },
              rule,
            );
            if (!due.deferred) adjusted += due.duePence;
          }
          const last = monthAdjustment(
            {
              billedUsagePence: billed,
              score: finalScore,
              disputed: false,
              provisional: false,
              adjustedPence: adjusted,
            },
            rule,
          );
          assert.ok(!last.deferred);
          assert.equal(adjusted + last.duePence, adjustmentPence(billed, bandBasisPoints(finalScore, rule)));
        },
      ),
    );
  });
});

describe('the rule off, and the cap', () => {
  test('no bands, or a zero cap, adjusts nothing whatever the score and usage', () => {
    fc.assert(
      fc.property(scores, fc.integer({ min: 0, max: 10_000_000 }), bands, (score, usage, someBands) => {
        for (const rule of [
          { bands: [], cap_percent: 50 },
          { bands: someBands, cap_percent: 0 },
        ]) {
          const due = monthAdjustment(
            { billedUsagePence: usage, score, disputed: false, provisional: false, adjustedPence: 0 },
            rule,
          );
          assert.deepEqual(due, { deferred: false, duePence: 0, basisPoints: 0 });
        }
      }),
    );
  });

  test('a month is never adjusted beyond the cap of its usage (to the half penny)', () => {
    fc.assert(
      fc.property(scores, fc.integer({ min: 0, max: 10_000_000 }), rules, (score, usage, rule) => {
        const due = monthAdjustment(
          { billedUsagePence: usage, score, disputed: false, provisional: false, adjustedPence: 0 },
          rule,
        );
        assert.ok(!due.deferred);
        // |pence| ≤ usage × cap / 100 + ½, in integers: 20,000 × |pence| ≤ 2 × usage × cap_bp + 10,000.
        const capPoints = Math.round(rule.cap_percent * 100);
        assert.ok(20_000 * Math.abs(due.duePence) <= 2 * usage * capPoints + 10_000);
      }),
    );
  });

  test('a month not over yet is deferred like a disputed one', () => {
    assert.deepEqual(
      monthAdjustment(
        { billedUsagePence: 5_000, score: 95, disputed: false, provisional: true, adjustedPence: 0 },
        RULE,
      ),
      { deferred: true },
    );
  });
});

describe('applyDues', () => {
  test('charges whole; credits only as far as the statement bills, oldest month first; the rest stays due', () => {
    assert.deepEqual(
      applyDues(
        [
          { month: '2025-07', duePence: -300 },
          { month: '2025-05', duePence: -400 },
          { month: '2025-06', duePence: 150 },
        ],
        200,
      ),
      [
        { month: '2025-05', appliedPence: -350 },
        { month: '2025-06', appliedPence: 150 },
      ],
    );
    assert.deepEqual(applyDues([{ month: '2025-05', duePence: -400 }], 1_000), [
      { month: '2025-05', appliedPence: -400 },
    ]);
    assert.deepEqual(applyDues([{ month: '2025-05', duePence: -400 }], 0), []);
    assert.deepEqual(applyDues([{ month: '2025-05', duePence: 0 }], 100), []);
  });

  test('never takes a statement below zero, and never applies more than is due', () => {
    const dues = fc.uniqueArray(
      fc.record({
        month: fc
          .integer({ min: 0, max: 40 })
          .map((i) => `20${String(25 + Math.floor(i / 12))}-${String((i % 12) + 1).padStart(2, '0')}`),
        duePence: fc.integer({ min: -100_000, max: 100_000 }),
      }),
      { selector: (d) => d.month, maxLength: 8 },
    );
    fc.assert(
      fc.property(dues, fc.integer({ min: 0, max: 200_000 }), (list, before) => {
        const applied = applyDues(list, before);
        const total = applied.reduce((sum, a) => sum + a.appliedPence, 0);
        assert.ok(before + total >= 0);
        for (const a of applied) {
          const due = list.find((d) => d.month === a.month)?.duePence ?? 0;
          assert.ok(a.appliedPence !== 0);
          assert.ok(due > 0 ? a.appliedPence === due : a.appliedPence < 0 && a.appliedPence >= due);
        }
        // When the statement can take every credit, everything due is applied.
        const owed = list.reduce((sum, d) => sum + d.duePence, 0);
        if (before + owed >= 0) assert.equal(total, owed);
      }),
    );
  });
});
