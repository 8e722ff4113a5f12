/** The policies a billing day bills: counted, and read a page at a time. */
import type { Executor } from '../../schema.ts';
import { duePoliciesQuery } from '../policies/index.ts';

/**
 * How many policies are due on a billing date: those of billing days `billingDays` (days past the
 * month's end fall on its last day), covered before `billingInstant`, across tenants.
 */
export async function countDueForBilling(
  db: Executor,
  billingDays: readonly number[],
  billingInstant: Date,
): Promise<number> {
  const row = await duePoliciesQuery(db, billingDays, billingInstant)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface DuePolicy {
  readonly id: string;
  readonly reference: string;
  /** A statement for this billing date exists already. */
  readonly billed: boolean;
}

/**
 * The policies due on `date`, a page of `pageSize` at a time: each billing day's in id order, each
 * page one range of `policies_billing_day_id_idx` after the last (a million-policy day is not held in
 * memory whole, nor read and sorted again for each page). Those with a statement for `date` already are
 * flagged, so a re-run reads and writes nothing else.
 */
export async function* dueForBilling(
  db: Executor,
  due: { billingDays: readonly number[]; billingInstant: Date; date: string; pageSize: number },
): AsyncGenerator<DuePolicy[]> {
  for (const billingDay of due.billingDays) {
    let afterId: string | null = null;
    for (;;) {
      let query = duePoliciesQuery(db, [billingDay], due.billingInstant)
        .select(['p.id', 'p.policy_reference'])
        .select((eb) =>
          eb
            .exists(
              eb
                .selectFrom('statements as s')
                .select('s.id')
                .whereRef('s.policy_id', '=', 'p.id')
                .where('s.billing_date', '=', due.date),
            )
            .as('billed'),
        );
      if (afterId !== null) query = query.where('p.id', '>', afterId);
      const rows = await query.orderBy('p.id').limit(due.pageSize).execute();
      if (rows.length > 0)
        yield rows.map((r) => ({
          id: r.id,
          reference: r.policy_reference,
          billed: Boolean(r.billed),
        }));
      if (rows.length < due.pageSize) break;
      afterId = rows.at(-1)?.id ?? null;
    }
  }
}
