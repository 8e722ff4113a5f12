export type { CompanyTables } from './company-repository.ts';
export {
  findCompanyByReference,
  findCompanyContact,
  findDirectDebitSettings,
  findSandboxKey,
  updateDirectDebitNotice,
} from './company-repository.ts';
export { createCompanyService, type CompanyService, type CompanyCredentials } from './company-service.ts';
export { companyRoutes, currentCompanyRoutes } from './company-routes.ts';
export {
  createClientAuth,
  environmentOf,
  sendsClientSecret,
  tenantOf,
  ClientHeadersSchema,
  type ClientAuth,
  type ClientAuthOptions,
} from './client-auth.ts';
export { asTenant, forTenant, type Tenant, type DataEnvironment, type Environment } from './tenant.ts';
export { companyIdOfReference, companyLabels } from './company-labels.ts';
