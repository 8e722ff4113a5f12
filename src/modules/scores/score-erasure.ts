import type { Executor } from '../../schema.ts';
import { deleteDisputes } from './dispute-repository.ts';

/**
 * The driving events of some policies deleted, in the caller's transaction (the erasure of their
 * policyholder): each says where and when the person drove. The trips' scores and the months' stay, as
 * numbers of pseudonymised policies. The events' disputes go with them (the policyholder's own words).
 * Returns the events deleted.
 */
export async function eraseTripEvents(trx: Executor, policyIds: readonly string[]): Promise<number> {
  if (policyIds.length === 0) return 0;
  await deleteDisputes(trx, policyIds);
  const deleted = await trx
    .deleteFrom('trip_score_events')
    .where('policy_id', 'in', policyIds)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
