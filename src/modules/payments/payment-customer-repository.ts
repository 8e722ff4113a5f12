import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';

/** The policyholder's customer at the processor (who keeps their card on file), or undefined. */
export async function findCustomer(
  db: Executor,
  tenant: Tenant,
  userId: string,
  provider: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('payment_customers')
    .select('provider_customer_id')
    .where(forTenant(tenant))
    .where('user_id', '=', userId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row?.provider_customer_id;
}

/** Which of these users have a customer (a card on file) with the processor, in one query. */
export async function usersWithCustomer(
  db: Executor,
  userIds: readonly string[],
  provider: string,
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('payment_customers')
    .select('user_id')
    .where('user_id', 'in', [...new Set(userIds)])
    .where('provider', '=', provider)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/** Links the policyholder to the processor's customer; the first link wins. */
export async function linkCustomer(
  db: Executor,
  tenant: Tenant,
  userId: string,
  provider: string,
  customerId: string,
  at: Date,
): Promise<void> {
  await db
    .insertInto('payment_customers')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      user_id: userId,
      provider,
      provider_customer_id: customerId,
      created_at: at,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The customers these users have with the processor, by user id, in their own tenants. */
export async function customersOf(
  db: Executor,
  users: ReadonlyArray<{ tenant: Tenant; userId: string }>,
  provider: string,
): Promise<Map<string, string>> {
  if (users.length === 0) return new Map();
  const rows = await db
    .selectFrom('payment_customers')
    .select(['user_id', 'company_id', 'environment', 'provider_customer_id'])
    .where('user_id', 'in', [...new Set(users.map((u) => u.userId))])
    .where('provider', '=', provider)
    .execute();
  const wanted = new Set(users.map((u) => `${u.userId}|${u.tenant.companyId}|${u.tenant.environment}`));
  return new Map(
    rows
      .filter((r) => wanted.has(`${r.user_id}|${r.company_id}|${r.environment}`))
      .map((r) => [r.user_id, r.provider_customer_id]),
  );
}
