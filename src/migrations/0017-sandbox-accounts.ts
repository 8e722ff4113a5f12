import { sql, type Kysely } from 'kysely';

/**
 * Each company has a Stripe sandbox account of its own: the secret key (`sk_test_…`) the service uses
 * for that company's sandbox payments, and that the company's developers may use against the sandbox.
 * Kept as it is, as Stripe keeps an account's test keys: the service must present it to the sandbox.
 * It reaches only test-mode objects of the built-in sandbox.
 *
 * Sandbox objects made before this belong to no account a key reaches (they were all made with one
 * shared key): cards saved in the sandbox before the upgrade must be added again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table companies add column stripe_sandbox_key text`.execute(db);
  await sql`
    update companies
    set stripe_sandbox_key = 'sk_test_' || md5(random()::text || id::text) || md5(random()::text || clock_timestamp()::text)`.execute(
    db,
  );
  await sql`alter table companies alter column stripe_sandbox_key set not null`.execute(db);
  await sql`alter table companies add constraint companies_stripe_sandbox_key_key unique (stripe_sandbox_key)`.execute(
    db,
  );
}
