/**
 * Retention of ended claims: a claim closed, rejected or withdrawn more than its company's retention period
 * ago (`claim_settings.retention_years`, default 6: rules/claim-retention.ts) has its personal data erased
 * as erasure erases a finished claim's, and the crash that opened it deleted, by a nightly job. A claim in
 * progress is never ended, so a claim under a legal hold (recorded on live claims) is never taken; a
 * reopened claim's clock stops, and starts again when it ends again.
 */
import { sql } from 'kysely';
import { inTransaction } from '../../platform/db/database.ts';
import type { Executor } from '../../schema.ts';
import { deleteCrashesById } from '../telematics/index.ts';
import { erasePersonalData } from './claim-erasure.ts';
import { DEFAULT_CLAIM_RETENTION_YEARS } from './rules/index.ts';

export const CLAIM_RETENTION_QUEUE = 'claims.pseudonymise-ended';
/** Claims pseudonymised per transaction. */
const BATCH = 200;
/** Batches per run at most: a run stays short; a backlog drains over the next nights. */
const MAX_BATCHES = 50;

interface Due {
  id: string;
  policy_id: string;
  crash_event_id: string | null;
}

/** One batch: ended claims past their retention at `now`, pseudonymised; how many. */
async function pseudonymiseBatch(db: Executor, now: Date, limit: number): Promise<number> {
  return inTransaction(db, async (trx) => {
    // NOTE: skip locked, so two workers running the job at once take different claims, and a claim being
    // reopened right now is left for the next night (when it is live, and so not taken).
    const due = await sql<Due>`
      select c.id, c.policy_id, c.crash_event_id
      from claims c
      left join claim_settings s on s.company_id = c.company_id and s.environment = c.environment
      where c.erased_at is null and c.state in ('closed', 'rejected', 'withdrawn') and c.ended_at is not null
        and c.ended_at + make_interval(years => coalesce(s.retention_years, ${DEFAULT_CLAIM_RETENTION_YEARS}))
          <= ${now}
      order by c.ended_at
      limit ${limit}
      for update of c skip locked`.execute(trx);
    for (const claim of due.rows) await erasePersonalData(trx, claim, now);
    await deleteCrashesById(
      trx,
      due.rows.flatMap((c) => (c.crash_event_id === null ? [] : [c.crash_event_id])),
    );
    return due.rows.length;
  });
}

/**
 * Every ended claim past its retention at `now` pseudonymised, in batches of their own transactions, at
 * most MAX_BATCHES a run. Idempotent: a pseudonymised claim has `erased_at` and is not taken again.
 */
export async function pseudonymiseEndedClaims(db: Executor, now: Date, batchSize = BATCH): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const done = await pseudonymiseBatch(db, now, batchSize);
    total += done;
    if (done < batchSize) break;
  }
  return total;
}
