export { splitPremium, totalSplit, type PremiumSplit, type Percent } from './rules/premium-split.ts';
export { reportRoutes } from './report-routes.ts';
