/** Fault: staff decide whether the policyholder was at fault; at renewal, the at-fault claims settled in the term. */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import { changeClaim, insertNote, type ClaimAuthor } from './claim-life-service.ts';
import { updateClaim } from './claim-repository.ts';
import type { ClaimView, Fault } from './claim-schemas.ts';

/**
 * The policy's at-fault claims settled in [fromAt, toAt): those staff found at fault and settled (still
 * settled, closed, or reopened since: the settlement stands until it is settled again).
 */
export async function countAtFaultClaimsSettled(
  db: Executor,
  policyId: string,
  range: { fromAt: Date; toAt: Date },
): Promise<number> {
  const row = await db
    .selectFrom('claims')
    .select(sql<string>`count(*)`.as('count'))
    .where('policy_id', '=', policyId)
    .where('at_fault', '=', true)
    .where('state', 'in', ['settled', 'closed', 'reopened'])
    .where('settled_at', '>=', range.fromAt)
    .where('settled_at', '<', range.toAt)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function createClaimFaultService(deps: ClaimServiceDeps) {
  return {
    /** Records whether the policyholder was at fault (any state; a reason becomes a note); the claim after. */
    setFault: (tenant: Tenant, claimId: string, body: Fault, by: ClaimAuthor): Promise<ClaimView> =>
      changeClaim(deps, tenant, claimId, `fault:${String(body.at_fault)}`, async (trx, claim, now) => {
        if (body.reason !== undefined)
          await insertNote(
            trx,
            claim,
            by,
            `${body.at_fault ? 'At fault' : 'Not at fault'}: ${body.reason}`,
            now,
          );
        return updateClaim(trx, { id: claim.id, policyId: claim.policy_id }, { at_fault: body.at_fault });
      }),
  };
}
