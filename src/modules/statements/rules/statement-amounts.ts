/**
 * A statement's amounts in integer pence: the subscription installments its period bills (across a
 * renewal, each term's at its own price), the total premium, what the product rules and the credit
 * ledger take off or add, the billed premium, what is carried to the next statement, and the ledger
 * entries that settle it. Pure: amounts and instants come in as values.
 */
import { carriedForward } from '../../payments/rules/index.ts';
import { installmentsDue, londonDate } from './statement-period.ts';

/** A term's subscription plan, as the policy's terms hold it. */
export interface InstallmentPlan {
  /** Day of the month installments fall due (null: the term's start day). */
  readonly billingDay: number | null;
  /** How many installments the term has (null: 12). */
  readonly subscriptionInstallments: number | null;
  /** The term's first installments paid at binding, never billed (absent: none). */
  readonly prepaidInstallments?: number;
}

/** A term: where it starts, its plan, and one installment's premium. */
export interface TermPlan extends InstallmentPlan {
  readonly startAt: Date;
  readonly subscriptionPremiumPence: number;
}

/**
 * How many of a term's installments fall due within [periodStart, periodEnd] and are billed: those after
 * the ones paid at binding (0 when the period is empty).
 */
export function termInstallments(
  plan: InstallmentPlan,
  termStartAt: Date,
  periodStart: Date,
  periodEnd: Date,
): number {
  if (periodEnd.getTime() < periodStart.getTime()) return 0;
  const prepaid = plan.prepaidInstallments ?? 0;
  const schedule = {
    policyStart: termStartAt,
    billingDay: plan.billingDay ?? Number(londonDate(termStartAt).slice(8)),
    count: plan.subscriptionInstallments ?? 12,
    periodEnd,
  };
  if (prepaid <= 0) return installmentsDue({ ...schedule, periodStart }).length;
  // The term's installments from its start, numbered: the first `prepaid` of them were paid at binding.
  const due = installmentsDue({ ...schedule, periodStart: termStartAt });
  return due.filter((at, n) => n >= prepaid && at.getTime() >= periodStart.getTime()).length;
}

export interface PeriodSubscription {
  /** Installments billed, of both terms. */
  readonly installments: number;
  readonly subscriptionPremiumPence: number;
}

/**
 * The installments a period [periodStartAt, periodEndAt] bills: the current term's that fall due in it
 * and, when the period starts before the current term (a statement spanning a renewal), the previous
 * term's that fall due before the current one starts, each at its own term's price. When the period's
 * end is the end of cover (`endsCover`, a final statement), an installment falling due at that very
 * instant buys no cover and is not billed.
 */
export function periodSubscription(input: {
  readonly currentTerm: TermPlan;
  readonly previousTerm: TermPlan | null;
  readonly periodStartAt: Date;
  readonly periodEndAt: Date;
  readonly endsCover?: boolean;
}): PeriodSubscription {
  const { currentTerm, previousTerm, periodStartAt } = input;
  // Periods are inclusive at one-second resolution: the last second before cover ends.
  const periodEndAt =
    input.endsCover === true ? new Date(input.periodEndAt.getTime() - 1000) : input.periodEndAt;
  const current = termInstallments(currentTerm, currentTerm.startAt, periodStartAt, periodEndAt);
  const earlier =
    previousTerm === null || periodStartAt.getTime() >= currentTerm.startAt.getTime()
      ? 0
      : termInstallments(
          previousTerm,
          previousTerm.startAt,
          periodStartAt,
          new Date(Math.min(periodEndAt.getTime(), currentTerm.startAt.getTime() - 1000)),
        );
  return {
    installments: current + earlier,
    subscriptionPremiumPence:
      current * currentTerm.subscriptionPremiumPence +
      earlier * (previousTerm?.subscriptionPremiumPence ?? 0),
  };
}

/** The product rules' lines of a statement (all 0 where its product has no rules). */
export interface RuleLines {
  readonly capCreditPence: number;
  readonly annualCapCreditPence: number;
  readonly freeDistanceCreditPence: number;
  readonly minimumTopUpPence: number;
  /** Price by score: positive charges, negative credits (never more than the rest bills). 0 when absent. */
  readonly scoreAdjustmentPence?: number;
}

export interface StatementAmounts {
  /** Usage premium + subscription premium, before rules and credits. */
  readonly totalPremiumPence: number;
  /** What the ledger's positive balance paid. */
  readonly creditsUsedPence: number;
  /** An amount owed on the ledger (carried forward by an earlier statement), billed now. */
  readonly broughtForwardPence: number;
  readonly billedPremiumPence: number;
  /** Billed but below the processor's minimum charge: left owing on the ledger for the next statement. */
  readonly carriedForwardPence: number;
  /** What the card is charged now: the billed premium less what is carried forward. */
  readonly chargePence: number;
}

/**
 * A statement's amounts: the total premium less the rules' credits plus the minimum's top-up and the
 * score adjustment; a
 * positive ledger balance (less what a capped day's recompute after voids charges back) pays what it
 * can of that, a negative one is brought forward and billed; a billed premium below the minimum charge
 * is carried forward, whole.
 */
export function statementAmounts(input: {
  readonly usagePremiumPence: number;
  readonly subscriptionPremiumPence: number;
  readonly rules: RuleLines;
  /** The policy's credit ledger balance before this statement. */
  readonly ledgerBalancePence: number;
  /** Taken off the ledger before the statement draws on it (a capped day recomputed after voids). */
  readonly chargedBackPence: number;
  readonly currency: string;
}): StatementAmounts {
  const { rules } = input;
  const totalPremiumPence = input.usagePremiumPence + input.subscriptionPremiumPence;
  const afterRulesPence =
    totalPremiumPence -
    rules.capCreditPence -
    rules.annualCapCreditPence -
    rules.freeDistanceCreditPence +
    rules.minimumTopUpPence +
    (rules.scoreAdjustmentPence ?? 0);
  const balance = input.ledgerBalancePence - input.chargedBackPence;
  const creditsUsedPence = Math.min(Math.max(balance, 0), afterRulesPence);
  const broughtForwardPence = Math.max(-balance, 0);
  const billedPremiumPence = afterRulesPence - creditsUsedPence + broughtForwardPence;
  const carriedForwardPence = carriedForward(billedPremiumPence, input.currency);
  return {
    totalPremiumPence,
    creditsUsedPence,
    broughtForwardPence,
    billedPremiumPence,
    carriedForwardPence,
    chargePence: billedPremiumPence - carriedForwardPence,
  };
}

/** A movement on the credit ledger a statement writes: positive credits the policy, negative uses credit. */
export interface LedgerMovement {
  readonly amountPence: number;
  readonly source: 'statement' | 'carried_forward';
}

/**
 * The ledger entries that settle a statement's amounts: credits used and an amount brought forward
 * both settle the ledger (one `statement` entry); an amount carried forward leaves it owing until the
 * next statement (a `carried_forward` entry). None where there is nothing to settle.
 */
export function ledgerMovements(amounts: StatementAmounts): LedgerMovement[] {
  const movements: LedgerMovement[] = [];
  if (amounts.creditsUsedPence > 0 || amounts.broughtForwardPence > 0)
    movements.push({
      amountPence: amounts.broughtForwardPence - amounts.creditsUsedPence,
      source: 'statement',
    });
  if (amounts.carriedForwardPence > 0)
    movements.push({ amountPence: -amounts.carriedForwardPence, source: 'carried_forward' });
  return movements;
}
