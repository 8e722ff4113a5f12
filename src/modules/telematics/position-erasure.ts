import type { Executor } from '../../schema.ts';

/**
 * The raw positions of some policies deleted, and the VIN cleared of every device ever bound to one
 * of them, in the caller's transaction (the erasure of their policyholder). Returns the positions
 * deleted.
 */
export async function erasePositionsAndDevices(trx: Executor, policyIds: readonly string[]): Promise<number> {
  if (policyIds.length === 0) return 0;
  const deleted = await trx.deleteFrom('positions').where('policy_id', 'in', policyIds).executeTakeFirst();
  await trx
    .updateTable('devices')
    .set({ vin: null })
    .where('id', 'in', (eb) =>
      eb.selectFrom('device_bindings').select('device_id').where('policy_id', 'in', policyIds),
    )
    .where('vin', 'is not', null)
    .execute();
  return Number(deleted.numDeletedRows);
}
