import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { documentsIssuedEmail } from '../notifications/index.ts';
import {
  findPolicy,
  findPolicyholderId,
  findPolicyReference,
  listVersions,
  type PolicyRecord,
} from '../policies/index.ts';
import { DocumentWithdrawn, sha256Hex, type DocumentServiceDeps } from './document-context.ts';
import type { DocumentView } from './document-schemas.ts';
import {
  findDocument,
  findSettings,
  getDocumentContent,
  insertDocument,
  listPolicyDocuments,
  saveSettings,
  type DocumentRecord,
  type DocumentSettings,
} from './document-repository.ts';
import { createDocumentWorker, type EventDocumentsMade } from './document-worker.ts';

const viewOf = (doc: DocumentRecord, policyReference: string, current: boolean): DocumentView => ({
  id: doc.id,
  kind: doc.kind,
  issued_at: doc.issuedAt.toISOString(),
  file_name: doc.fileName,
  size_bytes: doc.sizeBytes,
  sha256: doc.sha256,
  template_version: doc.templateVersion,
  policy_reference: policyReference,
  // A statement's id is its `st` version's reference.
  policy_version_reference: doc.policyVersionId ?? doc.statementId,
  payment_reference: doc.paymentId,
  journey_reference: doc.journeyId,
  reissue_of: doc.reissueOf,
  current,
  url: `/documents/${doc.id}`,
});

/**
 * The current certificate of a policy still in cover: the one of its latest version that has one (a
 * renewal's is made at the new term's start), the latest issued of those (a reissue).
 */
function currentCertificateId(
  policy: PolicyRecord,
  documents: readonly DocumentRecord[],
  sequenceOf: ReadonlyMap<string, number>,
  now: Date,
): string | undefined {
  if (policy.status !== 'active' || policy.currentEndAt.getTime() < now.getTime()) return undefined;
  const rank = (d: DocumentRecord) => sequenceOf.get(d.policyVersionId ?? '') ?? -1;
  let current: DocumentRecord | undefined;
  for (const d of documents) {
    if (d.kind !== 'certificate') continue;
    if (
      current === undefined ||
      rank(d) > rank(current) ||
      (rank(d) === rank(current) &&
        (d.issuedAt.getTime() > current.issuedAt.getTime() ||
          (d.issuedAt.getTime() === current.issuedAt.getTime() && d.reissueOf === current.id)))
    )
      current = d;
  }
  return current?.id;
}

/** The policy's documents, and which is its current certificate. */
async function documentsOf(db: Executor, policy: PolicyRecord, now: Date) {
  const documents = await listPolicyDocuments(db, policy.id);
  const sequenceOf = new Map((await listVersions(db, policy.id)).map((v) => [v.id, v.sequence]));
  return { documents, current: currentCertificateId(policy, documents, sequenceOf, now) };
}

/** Documents of policies (issue 37): made by the worker from what changes owe, read and reissued through the API. */
export function createDocumentService(deps: DocumentServiceDeps) {
  const { db, clock, notifications } = deps;

  const policyOf = async (trx: Executor, tenant: Tenant, reference: string): Promise<PolicyRecord> => {
    const policy = await findPolicy(trx, tenant, reference);
    if (policy === undefined) throw notFound(`Policy ${reference}`);
    return policy;
  };

  /**
   * With attachments on (a company setting), the policyholder is emailed the documents an event made
   * at once (or, for a renewal written early, those made at its start), in the transaction storing the
   * last of them.
   */
  const emailAttachments: EventDocumentsMade = async (trx, event) => {
    const scope = { companyId: event.companyId, environment: event.environment };
    if (
      !(await findSettings(trx, asTenant(event.companyId, event.environment as DataEnvironment)))
        .attachToEmails
    )
      return;
    const documents = (await listPolicyDocuments(trx, event.policyId))
      .filter((d) => d.sourceEventId === event.eventId && d.issuedAt.getTime() >= event.dueAt.getTime())
      .reverse();
    const userId = await findPolicyholderId(trx, event.policyId);
    const reference = await findPolicyReference(trx, event.policyId);
    const holder = userId === undefined ? undefined : await findPolicyholderContact(trx, userId);
    if (documents.length === 0 || holder === undefined || reference === undefined) return;
    const links = await notifications.documentLinks(trx, scope);
    await notifications.queueEmail(
      trx,
      scope,
      'documents-issued',
      holder.email,
      documentsIssuedEmail({
        firstNames: holder.firstNames,
        policyReference: reference,
        fileNames: documents.map((d) => d.fileName),
        documentsUrl: links?.(reference),
      }),
      userId,
      documents.map((d) => ({ document_id: d.id, policy_id: d.policyId })),
    );
  };

  const worker = createDocumentWorker(deps, emailAttachments);

  return {
    /** The policy's documents: the current certificate first, then newest first. 404 for another tenant's policy. */
    async list(tenant: Tenant, policyReference: string): Promise<DocumentView[]> {
      const policy = await policyOf(db, tenant, policyReference);
      const { documents, current } = await documentsOf(db, policy, clock.now());
      return [...documents.filter((d) => d.id === current), ...documents.filter((d) => d.id !== current)].map(
        (d) => viewOf(d, policy.policyReference, d.id === current),
      );
    },

    /** One of the tenant's documents: its record, its policy's reference and its bytes; 404 for another tenant's. */
    async file(
      tenant: Tenant,
      id: string,
    ): Promise<{ document: DocumentRecord; policyReference: string; content: Uint8Array }> {
      const document = await findDocument(db, tenant, id);
      const policyReference = document && (await findPolicyReference(db, document.policyId));
      if (document === undefined || policyReference === undefined) throw notFound('Document');
      return { document, policyReference, content: await getDocumentContent(db, document) };
    },

    /**
     * A new document with the same subject as `documentId`, rendered now with the current template;
     * the original stays as issued. 404 when the policy or document is not the tenant's.
     */
    async reissue(
      tenant: Tenant,
      policyReference: string,
      documentId: string,
      reason: string,
    ): Promise<DocumentView> {
      const policy = await policyOf(db, tenant, policyReference);
      const original = await findDocument(db, tenant, documentId);
      if (original?.policyId !== policy.id) throw notFound('Document');
      const issuedAt = clock.now();
      // NOTE: a certificate issued again certifies cover now: only the current one is, never one of a
      // policy cancelled, lapsed or past its term, nor one an adjustment or renewal has superseded.
      if (
        original.kind === 'certificate' &&
        (await documentsOf(db, policy, issuedAt)).current !== original.id
      )
        throw new AppError(
          'CONFLICT',
          'Only the current certificate is issued again: this one was superseded, or the policy is no longer in cover',
        );
      const rendered = await deps.render(db, { ...original, issuedAt }).catch((error: unknown) => {
        if (error instanceof DocumentWithdrawn)
          throw new AppError('CONFLICT', `The document cannot be issued again: ${error.message}`);
        throw error;
      });
      const stored = await inTransaction(db, (trx) =>
        insertDocument(trx, {
          ...original,
          templateVersion: rendered.templateVersion,
          sha256: sha256Hex(rendered.bytes),
          fileName: rendered.fileName,
          issuedAt,
          sourceEventId: null,
          reissueOf: original.id,
          reissueReason: reason,
          content: rendered.bytes,
        }),
      );
      if (stored === undefined) throw new AppError('INTERNAL', 'a reissued document was not stored');
      const { current } = await documentsOf(db, policy, issuedAt);
      return viewOf(stored, policy.policyReference, current === stored.id);
    },

    /** The tenant's document settings (defaults until saved). */
    settings: (tenant: Tenant): Promise<DocumentSettings> => findSettings(db, tenant),

    /** Saves the tenant's document settings. */
    saveSettings: (tenant: Tenant, settings: { attachToEmails: boolean }): Promise<DocumentSettings> =>
      saveSettings(db, tenant, settings, clock.now()),

    /** Every queued event expanded and every document due made, now (the worker's pass; tests call it). */
    runPending: (): Promise<void> => worker.runPending(),

    async registerWorkers(): Promise<void> {
      worker.start();
    },

    /** Stops the worker's passes, then ends the render threads (those rendering finish first). */
    stopWorkers: async (timeoutMs: number): Promise<void> => {
      await worker.stop(timeoutMs);
      await deps.closeRenderer?.();
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
