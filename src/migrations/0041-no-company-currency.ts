import { sql, type Kysely } from 'kysely';

/**
 * Companies lose their `currency` column. It said "GBP" for every company and nothing read it: Milepost
 * bills UK motor insurance, in pounds sterling (IPT, the motor insurance certificate and Bacs Direct Debit
 * are British), so statements, charges, emails, reports and both web apps use the one billing currency of
 * platform/money.ts. A column that any company could change while nothing honoured it was a promise the
 * service did not keep. Each payment still records the currency it was charged in, as the processor has it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table companies drop column currency`.execute(db);
}
