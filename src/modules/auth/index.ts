export type { AuthTables } from './auth-repository.ts';
export { createAuthService, type AuthService, type AuthSettings, type Policyholder } from './auth-service.ts';
export { authRoutes } from './auth-routes.ts';
export {
  createPolicyholderAuth,
  clientOrPolicyholder,
  policyholderOf,
  bearerToken,
  BearerHeadersSchema,
  type PolicyholderAuth,
  type PolicyholderAuthOptions,
} from './policyholder-auth.ts';
export {
  addressThrottleOf,
  createThrottles,
  throttleOf,
  type Throttle,
  type Throttles,
} from './throttles.ts';
export { ACCOUNT_THROTTLE } from './rules/index.ts';
export { checkNewPassword } from './common-passwords.ts';
export { deleteAccountCredentials } from './account-credentials.ts';
