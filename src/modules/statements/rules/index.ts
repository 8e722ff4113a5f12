/** The statements module's pure rules: periods and billing days, and a statement's amounts. */
export {
  automaticPeriodEnd,
  billingDateIn,
  installmentsDue,
  isBillingDate,
  nextPeriod,
} from './statement-period.ts';
export { isBillingDateString } from './statement-rules.ts';
export {
  ledgerMovements,
  periodSubscription,
  statementAmounts,
  termInstallments,
  type StatementAmounts,
} from './statement-amounts.ts';
export {
  adjustmentPence,
  applyDues,
  bandBasisPoints,
  monthAdjustment,
  type MonthDue,
  type MonthToAdjust,
  type ScorePricingRule,
} from './score-adjustment.ts';
