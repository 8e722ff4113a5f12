/** A policy's credit ledger for the console: goodwill credits granted, and the ledger read with its balance. */
import { inTransaction } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { fromPence } from '../../platform/money.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy } from '../policies/index.ts';
import { addCredits, creditBalances, listCredits } from './credit-repository.ts';
import type { StatementDeps } from './statement-writer.ts';

/** Goodwill credits and the ledger's reads. */
export function createCreditService(deps: Pick<StatementDeps, 'db' | 'clock'>) {
  const { db, clock } = deps;
  return {
    /** POST /admin/credits: a goodwill credit on a policy's ledger. */
    async grantCredit(
      tenant: Tenant,
      reference: string,
      amountPence: number,
      reason: string,
    ): Promise<{ policy_reference: string; balance: number }> {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const now = clock.now();
      await inTransaction(db, async (trx) => {
        await addCredits(trx, [
          {
            policyId: policy.id,
            companyId: tenant.companyId,
            environment: tenant.environment,
            amountPence,
            source: 'goodwill',
            reference: `goodwill:${crypto.randomUUID()}`,
            reason,
            at: now,
          },
        ]);
        await recordEvent(
          trx,
          tenant,
          'credit.granted',
          { policy_reference: reference, amount: fromPence(amountPence), reason },
          now,
        );
      });
      const balance = (await creditBalances(db, [policy.id])).get(policy.id) ?? 0;
      return { policy_reference: reference, balance: fromPence(balance) };
    },

    /** The policy's credit ledger and its balance (pounds), for the console. */
    async credits(tenant: Tenant, reference: string) {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const [entries, balances] = await Promise.all([
        listCredits(db, policy.id),
        creditBalances(db, [policy.id]),
      ]);
      return {
        policy_reference: reference,
        balance: fromPence(balances.get(policy.id) ?? 0),
        credits: entries.map((e) => ({
          amount: fromPence(e.amount_pence),
          source: e.source,
          reference: e.reference,
          reason: e.reason,
          created_at: e.created_at.toISOString(),
        })),
      };
    },
  };
}
