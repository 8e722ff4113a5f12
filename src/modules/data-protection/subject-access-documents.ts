import type { Executor } from '../../schema.ts';
import { array, type ExportContext } from './subject-access-sections.ts';
import { none, type After } from './subject-access-repository.ts';

/*
 * The documents section of a subject access export: each document issued for the person's policies,
 * with its PDF as base64. A page is a few documents (each up to a few hundred kilobytes), not the
 * export's usual two thousand rows, so that a long history costs a few megabytes of memory at most.
 */

const DOCUMENTS_PER_PAGE = 16;

async function pageDocuments(db: Executor, policyIds: readonly string[], after: After<{ id: string }>) {
  if (none(policyIds)) return [];
  let q = db
    .selectFrom('documents as d')
    .innerJoin('document_files as f', (join) =>
      join.onRef('f.document_id', '=', 'd.id').onRef('f.policy_id', '=', 'd.policy_id'),
    )
    .select([
      'd.id',
      'd.policy_id',
      'd.kind',
      'd.issued_at',
      'd.file_name',
      'd.size_bytes',
      'd.sha256',
      'd.template_version',
      'd.policy_version_id',
      'd.statement_id',
      'd.payment_id',
      'd.journey_id',
      'd.reissue_of',
      'd.reissue_reason',
      'f.content',
    ])
    .where('d.policy_id', 'in', policyIds);
  if (after !== undefined) q = q.where('d.id', '>', after.id);
  return q.orderBy('d.id').limit(DOCUMENTS_PER_PAGE).execute();
}

/** `documents`: every document of their policies, its bytes as base64, a few at a time. */
export async function* documentSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, policyIds } = ctx;
  async function* shown() {
    let after: { id: string } | undefined;
    for (;;) {
      const batch = await pageDocuments(db, policyIds, after);
      if (batch.length > 0)
        yield batch.map(({ content, policy_id: policyId, ...document }) => ({
          ...document,
          policy_reference: ctx.policyReference(policyId),
          content_base64: Buffer.from(content).toString('base64'),
        }));
      if (batch.length < DOCUMENTS_PER_PAGE) return;
      after = batch[batch.length - 1];
    }
  }
  yield* array(ctx, 'documents', shown());
}
