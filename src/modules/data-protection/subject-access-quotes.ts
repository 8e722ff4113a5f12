import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { array, pages, type ExportContext } from './subject-access-sections.ts';
import {
  EXPORT_BATCH_ROWS,
  listSnapshotEmails,
  parsed,
  type After,
  type Subject,
} from './subject-access-repository.ts';

/*
 * The quotes section of a subject access export: the quotes the person asked for (by any address
 * their account or policies used) and the quotes bound to their policies, in the company and
 * environment of the account, with what was asked, the price, the breakdown and the decision.
 */

async function pageQuotes(
  db: Executor,
  subject: Subject,
  emails: readonly string[],
  policyIds: readonly string[],
  after: After<{ id: string }>,
) {
  const bound =
    policyIds.length === 0
      ? sql<boolean>`false`
      : sql<boolean>`q.id in (select quote_id from quote_bindings where policy_id in (${sql.join(policyIds)}))`;
  let q = db
    .selectFrom('quotes as q')
    .leftJoin('quote_bindings as b', 'b.quote_id', 'q.id')
    .select([
      'q.id',
      'q.quote_reference',
      'q.quote_version_reference',
      'q.rate_book_reference',
      'q.rate_book_version',
      'q.policy_reference',
      'q.applicant_email',
      'q.input',
      'q.pricing',
      'q.breakdown',
      'q.decision',
      'q.reasons',
      'q.referral_status',
      'q.referral_reason',
      'q.referral_decided_at',
      'q.created_at',
      'q.expires_at',
      'q.pseudonymised_at',
      'b.policy_id as bound_policy_id',
      'b.bound_at',
    ])
    .where('q.company_id', '=', subject.companyId)
    .where('q.environment', '=', subject.environment)
    .where((eb) => eb.or([eb('q.applicant_email', 'in', [...emails]), bound]));
  if (after !== undefined) q = q.where('q.id', '>', after.id);
  return q.orderBy('q.id').limit(EXPORT_BATCH_ROWS).execute();
}

/** `quotes`: each quote they asked for or that their policies bound. */
export async function* quoteSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, subject, policyIds } = ctx;
  const emails = [...new Set([subject.email.toLowerCase(), ...(await listSnapshotEmails(db, policyIds))])];
  async function* shown() {
    for await (const batch of pages((after?: { id: string }) =>
      pageQuotes(db, subject, emails, policyIds, after),
    ))
      yield batch.map(({ bound_policy_id: policyId, input, pricing, breakdown, reasons, ...quote }) => ({
        ...quote,
        bound_policy_reference: ctx.policyReference(policyId),
        input: parsed(input),
        pricing: parsed(pricing),
        breakdown: parsed(breakdown),
        reasons: parsed(reasons),
      }));
  }
  yield* array(ctx, 'quotes', shown());
}
