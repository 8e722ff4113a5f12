import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BILLING_CURRENCY } from '../../../platform/money.ts';
import { MINIMUM_CHARGE_MINOR_UNITS } from '../../payments/rules/index.ts';
import {
  ledgerMovements,
  periodSubscription,
  statementAmounts,
  termInstallments,
  type RuleLines,
  type TermPlan,
} from './statement-amounts.ts';
import { billingDateIn, londonMidnight } from './statement-period.ts';

const NO_RULES: RuleLines = {
  capCreditPence: 0,
  annualCapCreditPence: 0,
  freeDistanceCreditPence: 0,
  minimumTopUpPence: 0,
};
/** The processor's smallest charge in pounds sterling (30p). */
const MINIMUM_PENCE = MINIMUM_CHARGE_MINOR_UNITS[BILLING_CURRENCY] ?? 0;
/** The end of the period billed on `date`: the last second of the day before. */
const endBefore = (date: string) => new Date(londonMidnight(date).getTime() - 1000);

describe('termInstallments', () => {
  const june = londonMidnight('2025-06-01');
  const cases: Array<{
    name: string;
    plan: {
      billingDay: number | null;
      subscriptionInstallments: number | null;
      prepaidInstallments?: number;
    };
    termStartAt: Date;
    periodStart: Date;
    periodEnd: Date;
    installments: number;
  }> = [
    {
      name: 'the first period holds the installment due at the start',
      plan: { billingDay: 1, subscriptionInstallments: 12 },
      termStartAt: june,
      periodStart: june,
      periodEnd: endBefore('2025-07-01'),
      installments: 1,
    },
    {
      name: 'a quarter holds three',
      plan: { billingDay: 1, subscriptionInstallments: 12 },
      termStartAt: june,
      periodStart: june,
      periodEnd: endBefore('2025-09-01'),
      installments: 3,
    },
    {
      name: 'never more than the plan’s count',
      plan: { billingDay: 1, subscriptionInstallments: 3 },
      termStartAt: june,
      periodStart: june,
      periodEnd: endBefore('2026-06-01'),
      installments: 3,
    },
    {
      name: 'no billing day: the start’s day of the month; no count: 12',
      plan: { billingDay: null, subscriptionInstallments: null },
      termStartAt: londonMidnight('2025-06-15'),
      periodStart: londonMidnight('2025-06-15'),
      periodEnd: endBefore('2027-01-01'),
      installments: 12,
    },
    {
      name: 'an empty period (ends before it starts) holds none',
      plan: { billingDay: 1, subscriptionInstallments: 12 },
      termStartAt: june,
      periodStart: londonMidnight('2025-07-02'),
      periodEnd: londonMidnight('2025-07-01'),
      installments: 0,
    },
    {
      name: 'the installment paid at binding is not billed in the first period',
      plan: { billingDay: 1, subscriptionInstallments: 12, prepaidInstallments: 1 },
      termStartAt: june,
      periodStart: june,
      periodEnd: endBefore('2025-07-01'),
      installments: 0,
    },
    {
      name: 'after the installment paid at binding, each falls due once: 11 over the term',
      plan: { billingDay: 1, subscriptionInstallments: 12, prepaidInstallments: 1 },
      termStartAt: june,
      periodStart: june,
      periodEnd: endBefore('2026-06-01'),
      installments: 11,
    },
    {
      name: 'a later period is billed as without a payment at binding',
      plan: { billingDay: 1, subscriptionInstallments: 12, prepaidInstallments: 1 },
      termStartAt: june,
      periodStart: londonMidnight('2025-07-01'),
      periodEnd: endBefore('2025-09-01'),
      installments: 2,
    },
  ];
  for (const c of cases)
    test(c.name, () => {
      assert.equal(termInstallments(c.plan, c.termStartAt, c.periodStart, c.periodEnd), c.installments);
    });
});

describe('periodSubscription', () => {
  const previousTerm: TermPlan = {
    startAt: londonMidnight('2024-06-01'),
    billingDay: 1,
    subscriptionInstallments: 12,
    subscriptionPremiumPence: 1000,
  };
  const currentTerm: TermPlan = {
    startAt: londonMidnight('2025-06-01'),
    billingDay: 1,
    subscriptionInstallments: 12,
    subscriptionPremiumPence: 1200,
  };

  test('within the current term: its installments at its price', () => {
    assert.deepEqual(
      periodSubscription({
        currentTerm,
        previousTerm,
        periodStartAt: londonMidnight('2025-07-01'),
        periodEndAt: endBefore('2025-09-01'),
      }),
      { installments: 2, subscriptionPremiumPence: 2400 },
    );
  });

  test('across a renewal: each term’s installments at each term’s price', () => {
    // May is the old term's last month; June 1 is the new term's first installment.
    assert.deepEqual(
      periodSubscription({
        currentTerm,
        previousTerm,
        periodStartAt: londonMidnight('2025-05-01'),
        periodEndAt: endBefore('2025-07-01'),
      }),
      { installments: 2, subscriptionPremiumPence: 1000 + 1200 },
    );
  });

  test('no previous term known: only the current term’s', () => {
    assert.deepEqual(
      periodSubscription({
        currentTerm,
        previousTerm: null,
        periodStartAt: londonMidnight('2025-05-01'),
        periodEndAt: endBefore('2025-07-01'),
      }),
      { installments: 1, subscriptionPremiumPence: 1200 },
    );
  });

  test('a period ending cover bills no installment falling due at its last instant', () => {
    const period = { currentTerm, previousTerm, periodStartAt: londonMidnight('2025-07-01') };
    const august = londonMidnight('2025-08-01');
    assert.deepEqual(periodSubscription({ ...period, periodEndAt: august }), {
      installments: 2,
      subscriptionPremiumPence: 2400,
    });
    assert.deepEqual(periodSubscription({ ...period, periodEndAt: august, endsCover: true }), {
      installments: 1,
      subscriptionPremiumPence: 1200,
    });
    // Cancelled from inception: cover ends at the start, when the first installment falls due.
    const start = currentTerm.startAt;
    assert.equal(
      periodSubscription({
        currentTerm,
        previousTerm: null,
        periodStartAt: start,
        periodEndAt: start,
        endsCover: true,
      }).installments,
      0,
    );
  });

  test('property: monthly periods across a renewal bill every installment of both terms once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (billingDay, oldCount, newCount, oldPence, newPence) => {
          const old: TermPlan = {
            startAt: londonMidnight('2024-06-01'),
            billingDay,
            subscriptionInstallments: oldCount,
            subscriptionPremiumPence: oldPence,
          };
          const current: TermPlan = {
            startAt: londonMidnight('2025-06-01'),
            billingDay,
            subscriptionInstallments: newCount,
            subscriptionPremiumPence: newPence,
          };
          let installments = 0;
          let pence = 0;
          let start = old.startAt;
          for (let m = 0; m < 26; m++) {
            const month = ((6 + m) % 12) + 1;
            const year = 2024 + Math.floor((6 + m) / 12);
            const end = endBefore(billingDateIn(year, month, billingDay));
            if (end.getTime() < start.getTime()) continue;
            // The current term's terms are known from its start; before it, the period is the old term's.
            const sub = periodSubscription(
              start.getTime() < current.startAt.getTime() && end.getTime() < current.startAt.getTime()
                ? { currentTerm: old, previousTerm: null, periodStartAt: start, periodEndAt: end }
                : { currentTerm: current, previousTerm: old, periodStartAt: start, periodEndAt: end },
            );
            assert.ok(sub.installments >= 0 && sub.subscriptionPremiumPence >= 0);
            installments += sub.installments;
            pence += sub.subscriptionPremiumPence;
            start = new Date(end.getTime() + 1000);
          }
          assert.equal(installments, oldCount + newCount);
          assert.equal(pence, oldCount * oldPence + newCount * newPence);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('statementAmounts', () => {
  const amounts = (over: Partial<Parameters<typeof statementAmounts>[0]>) =>
    statementAmounts({
      usagePremiumPence: 0,
      subscriptionPremiumPence: 0,
      rules: NO_RULES,
      ledgerBalancePence: 0,
      chargedBackPence: 0,
      currency: BILLING_CURRENCY,
      ...over,
    });

  const cases: Array<{
    name: string;
    input: Partial<Parameters<typeof statementAmounts>[0]>;
    expected: ReturnType<typeof statementAmounts>;
  }> = [
    {
      name: 'no credit: the total is billed and charged',
      input: { usagePremiumPence: 1234, subscriptionPremiumPence: 1000 },
      expected: {
        totalPremiumPence: 2234,
        creditsUsedPence: 0,
        broughtForwardPence: 0,
        billedPremiumPence: 2234,
        carriedForwardPence: 0,
        chargePence: 2234,
      },
    },
    {
      name: 'a credit pays part',
      input: { usagePremiumPence: 2000, ledgerBalancePence: 500 },
      expected: {
        totalPremiumPence: 2000,
        creditsUsedPence: 500,
        broughtForwardPence: 0,
        billedPremiumPence: 1500,
        carriedForwardPence: 0,
        chargePence: 1500,
      },
    },
    {
      name: 'a credit larger than the premium pays all of it and keeps the rest',
      input: { usagePremiumPence: 2000, ledgerBalancePence: 5000 },
      expected: {
        totalPremiumPence: 2000,
        creditsUsedPence: 2000,
        broughtForwardPence: 0,
        billedPremiumPence: 0,
        carriedForwardPence: 0,
        chargePence: 0,
      },
    },
    {
      name: 'an amount owing is brought forward and billed',
      input: { usagePremiumPence: 1000, ledgerBalancePence: -30 },
      expected: {
        totalPremiumPence: 1000,
        creditsUsedPence: 0,
        broughtForwardPence: 30,
        billedPremiumPence: 1030,
        carriedForwardPence: 0,
        chargePence: 1030,
      },
    },
    {
      name: 'below the minimum charge: carried forward whole, nothing charged',
      input: { usagePremiumPence: 29 },
      expected: {
        totalPremiumPence: 29,
        creditsUsedPence: 0,
        broughtForwardPence: 0,
        billedPremiumPence: 29,
        carriedForwardPence: 29,
        chargePence: 0,
      },
    },
    {
      name: 'the minimum charge itself is charged',
      input: { usagePremiumPence: 30 },
      expected: {
        totalPremiumPence: 30,
        creditsUsedPence: 0,
        broughtForwardPence: 0,
        billedPremiumPence: 30,
        carriedForwardPence: 0,
        chargePence: 30,
      },
    },
    {
      name: 'the rules’ credits come off and the top-up goes on before the ledger pays',
      input: {
        usagePremiumPence: 3000,
        subscriptionPremiumPence: 1000,
        rules: {
          capCreditPence: 400,
          annualCapCreditPence: 300,
          freeDistanceCreditPence: 200,
          minimumTopUpPence: 0,
        },
        ledgerBalancePence: 100,
      },
      expected: {
        totalPremiumPence: 4000,
        creditsUsedPence: 100,
        broughtForwardPence: 0,
        billedPremiumPence: 3000,
        carriedForwardPence: 0,
        chargePence: 3000,
      },
    },
    {
      name: 'a charge-back after voids is taken off the balance first',
      input: { usagePremiumPence: 1000, ledgerBalancePence: 300, chargedBackPence: 500 },
      expected: {
        totalPremiumPence: 1000,
        creditsUsedPence: 0,
        broughtForwardPence: 200,
        billedPremiumPence: 1200,
        carriedForwardPence: 0,
        chargePence: 1200,
      },
    },
  ];
  for (const c of cases)
    test(c.name, () => {
      assert.deepEqual(amounts(c.input), c.expected);
    });

  /** Amounts as the rules make them: credits never above the usage premium they credit. */
  const statementInput = fc
    .record({
      usagePremiumPence: fc.integer({ min: 0, max: 1_000_000 }),
      subscriptionPremiumPence: fc.integer({ min: 0, max: 100_000 }),
      shares: fc.tuple(fc.nat(100), fc.nat(100), fc.nat(100)),
      minimumTopUpPence: fc.integer({ min: 0, max: 10_000 }),
      ledgerBalancePence: fc.integer({ min: -100_000, max: 100_000 }),
      chargedBackPence: fc.integer({ min: 0, max: 10_000 }),
    })
    .map(({ shares, minimumTopUpPence, ...rest }) => {
      // Split at most the usage premium among the three credits.
      const [a, b, c] = shares;
      const whole = a + b + c + 1;
      const cap = Math.floor((rest.usagePremiumPence * a) / whole);
      const annual = Math.floor((rest.usagePremiumPence * b) / whole);
      const free = Math.floor((rest.usagePremiumPence * c) / whole);
      return {
        ...rest,
        rules: {
          capCreditPence: cap,
          annualCapCreditPence: annual,
          freeDistanceCreditPence: free,
          minimumTopUpPence,
        },
        currency: BILLING_CURRENCY,
      };
    });

  test('property: the parts add up, nothing is negative, and the charge is all or nothing', () => {
    fc.assert(
      fc.property(statementInput, (input) => {
        const a = statementAmounts(input);
        const { rules } = input;
        const afterRules =
          a.totalPremiumPence -
          rules.capCreditPence -
          rules.annualCapCreditPence -
          rules.freeDistanceCreditPence +
          rules.minimumTopUpPence;
        assert.equal(a.totalPremiumPence, input.usagePremiumPence + input.subscriptionPremiumPence);
        assert.equal(a.billedPremiumPence, afterRules - a.creditsUsedPence + a.broughtForwardPence);
        assert.equal(a.chargePence + a.carriedForwardPence, a.billedPremiumPence);
        for (const value of Object.values(a)) assert.ok(value >= 0, JSON.stringify(a));
        // A credit never takes the billed premium below zero, nor is more used than the balance held.
        assert.ok(a.creditsUsedPence <= Math.max(input.ledgerBalancePence - input.chargedBackPence, 0));
        // Credit is used or a debt brought forward, never both.
        assert.ok(a.creditsUsedPence === 0 || a.broughtForwardPence === 0);
        // All or nothing: a charge is at least the minimum, or the whole billed premium is carried.
        assert.ok(a.chargePence === 0 || a.chargePence >= MINIMUM_PENCE);
        assert.ok(a.carriedForwardPence === 0 || a.carriedForwardPence === a.billedPremiumPence);
        // The same inputs give the same amounts (a retried chunk bills the same).
        assert.deepEqual(statementAmounts(input), a);
      }),
      { numRuns: 1000 },
    );
  });

  test('property: the ledger after a statement owes only what it carried forward', () => {
    fc.assert(
      fc.property(statementInput, (input) => {
        const a = statementAmounts(input);
        const balance = input.ledgerBalancePence - input.chargedBackPence;
        const after = balance + ledgerMovements(a).reduce((t, m) => t + m.amountPence, 0);
        assert.equal(after, Math.max(balance, 0) - a.creditsUsedPence - a.carriedForwardPence);
        assert.ok(after + a.carriedForwardPence >= 0);
      }),
      { numRuns: 1000 },
    );
  });

  test('property: over a run of statements, what is charged and still owed is what was billed less the credit used', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 24 }),
        (creditPence, premiums) => {
          let balance = creditPence;
          let charged = 0;
          let usedCredit = 0;
          for (const usagePremiumPence of premiums) {
            const a = statementAmounts({
              usagePremiumPence,
              subscriptionPremiumPence: 0,
              rules: NO_RULES,
              ledgerBalancePence: balance,
              chargedBackPence: 0,
              currency: BILLING_CURRENCY,
            });
            charged += a.chargePence;
            usedCredit += a.creditsUsedPence;
            balance += ledgerMovements(a).reduce((t, m) => t + m.amountPence, 0);
          }
          const owed = Math.max(-balance, 0);
          const premiumTotal = premiums.reduce((t, p) => t + p, 0);
          assert.equal(charged + owed, premiumTotal - usedCredit);
          assert.equal(usedCredit, creditPence - Math.max(balance, 0));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('ledgerMovements', () => {
  test('credits used and amounts brought forward settle in one entry; a carried amount in another', () => {
    const base = {
      totalPremiumPence: 0,
      creditsUsedPence: 0,
      broughtForwardPence: 0,
      billedPremiumPence: 0,
      carriedForwardPence: 0,
      chargePence: 0,
    };
    assert.deepEqual(ledgerMovements(base), []);
    assert.deepEqual(ledgerMovements({ ...base, creditsUsedPence: 500 }), [
      { amountPence: -500, source: 'statement' },
    ]);
    assert.deepEqual(ledgerMovements({ ...base, broughtForwardPence: 30, carriedForwardPence: 40 }), [
      { amountPence: 30, source: 'statement' },
      { amountPence: -40, source: 'carried_forward' },
    ]);
  });
});
