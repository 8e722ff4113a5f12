import { forTenant, type Tenant } from '../companies/index.ts';
import type { Executor } from '../../schema.ts';

/** How many policyholder accounts a tenant has, whatever their state (the bench seed numbers new people after them). */
export async function countPolicyholders(db: Executor, tenant: Tenant): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where(forTenant(tenant))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
