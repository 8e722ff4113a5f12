export type { AuthTables } from './auth-repository.ts';
export { createAuthService, type AuthService, type AuthSettings, type Policyholder } from './auth-service.ts';
export { authRoutes } from './auth-routes.ts';
export { installMockPages, MOCKED_ROUTES } from './mock-pages.ts';
export {
  createPolicyholderAuth,
  clientOrPolicyholder,
  policyholderOf,
  bearerToken,
  BearerHeadersSchema,
  type PolicyholderAuth,
  type PolicyholderAuthOptions,
} from './policyholder-auth.ts';
