export type { ClaimTables } from './claim-repository.ts';
export { createClaimService, type ClaimService } from './claim-service.ts';
export { claimRoutes } from './claim-routes.ts';
export { eraseClaims, findClaimPhotoContent, listClaimsOfPolicies, type KeptClaim } from './claim-erasure.ts';
export { CLAIM_STATES, CLAIM_TRANSITIONS, type ClaimState } from './rules/index.ts';
export { countAtFaultClaimsSettled } from './claim-fault-service.ts';
