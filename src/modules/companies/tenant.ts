/** The environments whose data is kept: sandbox and production never mix. */
export type DataEnvironment = 'sandbox' | 'production';
export type Environment = DataEnvironment | 'mock';

declare const tenantBrand: unique symbol;

/**
 * Who a request acts for: a company in one environment. Only client authentication (and the
 * policyholder token check) makes one, and every repository function for tenant-owned rows takes
 * one, so a query without the company and environment filter does not type-check.
 */
export interface Tenant {
  readonly companyId: string;
  readonly environment: DataEnvironment;
  readonly [tenantBrand]: true;
}

export function asTenant(companyId: string, environment: DataEnvironment): Tenant {
  return { companyId, environment } as Tenant;
}
