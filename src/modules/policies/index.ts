export type { PolicyTables, PolicyRecord } from './policy-repository.ts';
export { createPolicyService, type PolicyService, END_TERMS_QUEUE } from './policy-service.ts';
export { policyRoutes } from './policy-routes.ts';
export type { PolicySnapshot, VersionRecord } from './policy-versions.ts';
