export { splitPremium, totalSplit, type PremiumSplit, type Percent } from './premium-split.ts';
export { bordereauAmounts, type BordereauAmounts, type BordereauSource } from './bordereau-amounts.ts';
export { cashRange, createCashSummary, type CashSummary, type CashTotals } from './cash-summary.ts';
