import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { listVersions } from '../policies/index.ts';
import { retentionOnErasure, type DocumentKind } from './rules/index.ts';
import { deleteDocuments, listDocumentsOfPolicies } from './document-repository.ts';

/** A document an erasure kept, and why: the erasure's record lists each. */
export interface KeptDocument {
  readonly documentId: string;
  readonly policyReference: string;
  readonly kind: DocumentKind;
  readonly keepUntil: Date;
  readonly reason: string;
}

export interface DocumentErasure {
  readonly documentsDeleted: number;
  readonly documentsKept: readonly KeptDocument[];
}

/** The end of each version's term (its snapshot's `end_date`), by version id. */
async function termEnds(trx: Executor, policyIds: readonly string[]): Promise<Map<string, Date>> {
  const ends = new Map<string, Date>();
  for (const policyId of policyIds)
    for (const version of await listVersions(trx, policyId))
      if (version.versionType !== 'st')
        ends.set(version.id, new Date(version.snapshot.policy.end_date * 1000));
  return ends;
}

/**
 * Erases the documents of a person's policies in the erasure's transaction: every document goes but a
 * term's certificate and schedule within six years of the term's end (rules/document-retention.ts),
 * which are kept, each with its reason. Documents still owed and events still queued for them go too:
 * nothing more is issued from what they were.
 */
export async function eraseDocuments(
  trx: Executor,
  policies: ReadonlyArray<{ id: string; reference: string }>,
  now: Date,
): Promise<DocumentErasure> {
  const policyIds = policies.map((p) => p.id);
  if (policyIds.length === 0) return { documentsDeleted: 0, documentsKept: [] };
  const referenceOf = new Map(policies.map((p) => [p.id, p.reference]));
  const documents = await listDocumentsOfPolicies(trx, policyIds);
  const ends = await termEnds(trx, policyIds);
  const kept: KeptDocument[] = [];
  const deleted: Array<{ id: string; policyId: string }> = [];
  for (const document of documents) {
    const termEndAt =
      (document.policyVersionId === null ? undefined : ends.get(document.policyVersionId)) ??
      document.issuedAt;
    const decision = retentionOnErasure({ kind: document.kind, termEndAt }, now);
    if (decision.keep)
      kept.push({
        documentId: document.id,
        policyReference: referenceOf.get(document.policyId) ?? '',
        kind: document.kind,
        keepUntil: decision.until,
        reason: decision.reason,
      });
    else deleted.push(document);
  }
  await deleteDocuments(trx, deleted);
  await trx.deleteFrom('documents_owed').where('policy_id', 'in', policyIds).execute();
  await trx
    .deleteFrom('document_pending_events')
    .where(sql<string>`data ->> 'policy_reference'`, 'in', [...referenceOf.values()])
    .execute();
  return { documentsDeleted: deleted.length, documentsKept: kept };
}
