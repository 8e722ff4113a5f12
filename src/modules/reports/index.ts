export { splitPremium, totalSplit, type PremiumSplit, type Percent } from './rules/index.ts';
export { reportRoutes } from './report-routes.ts';
