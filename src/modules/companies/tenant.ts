import { sql, type RawBuilder, type SqlBool } from 'kysely';

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

/**
 * The filter every query of tenant-owned rows carries, in one place: `.where(forTenant(tenant))`, or
 * `.where(forTenant(tenant, 'p'))` where the table is aliased. Taking the `Tenant` (which only client
 * authentication makes) keeps a caller from filtering by a company id it merely has at hand.
 */
export function forTenant(tenant: Tenant, table?: string): RawBuilder<SqlBool> {
  const column = (name: string): string => (table === undefined ? name : `${table}.${name}`);
  return sql<SqlBool>`${sql.ref(column('company_id'))} = ${tenant.companyId} and ${sql.ref(column('environment'))} = ${tenant.environment}`;
}
