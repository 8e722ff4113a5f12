import type { Executor } from '../../schema.ts';

/**
 * A policyholder's address and full name, as the payment processor's customer carries them; throws
 * (Kysely's NoResultError) when there is no such user.
 */
export async function getPolicyholderName(
  db: Executor,
  userId: string,
): Promise<{ email: string; firstNames: string; lastNames: string }> {
  const row = await db
    .selectFrom('users')
    .select(['email', 'first_names', 'last_names'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return { email: row.email, firstNames: row.first_names, lastNames: row.last_names };
}

/**
 * Policyholders' addresses as another module's query joins them (id, email, first names), as a
 * derived table that the planner flattens into a plain join: `.innerJoin(policyholderContacts(db).as('u'), …)`.
 */
export function policyholderContacts(db: Executor) {
  return db.selectFrom('users').select(['id', 'email', 'first_names']);
}
