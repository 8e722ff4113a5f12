export { splitPremium, totalSplit, type PremiumSplit, type Percent } from './rules/premium-split.ts';
