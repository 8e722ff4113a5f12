/**
 * What the claimant hears of their claim's life: an email when it is opened, settled, rejected or closed
 * (the documents module renders no claim letters), queued in the change's transaction so that it is sent
 * exactly when the change commits.
 */
import type { Executor } from '../../schema.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import { claimStateEmail, type ToldClaimState } from '../notifications/index.ts';
import { findPolicyholderId } from '../policies/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import type { ClaimRow } from './claim-repository.ts';

const TOLD: ReadonlySet<string> = new Set<ToldClaimState>(['open', 'settled', 'rejected', 'closed']);

/** Queues the claimant's email when the claim has just reached a state they are told of. */
export async function tellClaimant(
  deps: ClaimServiceDeps,
  trx: Executor,
  tenant: Tenant,
  change: { before: string; claim: ClaimRow; policyReference: string },
): Promise<void> {
  const { claim } = change;
  if (change.before === claim.state || !TOLD.has(claim.state)) return;
  const userId = await findPolicyholderId(trx, claim.policy_id);
  const contact = userId === undefined ? undefined : await findPolicyholderContact(trx, userId);
  if (userId === undefined || contact === undefined) return;
  await deps.notifications.queueEmails(trx, [
    {
      scope: tenant,
      template: `claim-${claim.state}`,
      to: contact.email,
      userId,
      email: claimStateEmail({
        firstNames: contact.firstNames,
        policyReference: change.policyReference,
        claimReference: claim.id,
        state: claim.state as ToldClaimState,
      }),
    },
  ]);
}
