/** The products module's pure rules, for other modules' rules. */
export { capMetres, freeMetres, METRES_PER, type DistanceUnit } from './distances.ts';
export { productVersionAt, type VersionInTime } from './product-versions.ts';
export {
  DEFAULT_NO_CLAIMS_STEP_BACK,
  noClaimsStepBackProblems,
  noClaimsYearsAfter,
  type NoClaimsStepBack,
} from './no-claims.ts';
export { scorePricingProblems, type ScorePricingInput } from './score-pricing.ts';
