import { sql } from 'kysely';
import type { Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { DocumentKind, OwedDocument } from './rules/index.ts';

export interface DocumentTables {
  /** Events that owe documents, copied by a trigger on `events` in the change's transaction (0042). */
  document_pending_events: {
    event_id: string;
    company_id: string;
    environment: string;
    type: string;
    data: string | Record<string, unknown>;
    created_at: Date;
  };
  /** One row per document owed and not yet made; deleted in the transaction that stores it. */
  documents_owed: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    event_id: string;
    kind: DocumentKind;
    policy_version_id: string | null;
    statement_id: string | null;
    payment_id: string | null;
    journey_id: string | null;
    due_at: Date;
    attempts: Generated<number>;
    leased_until: Date | null;
    last_error: string | null;
    created_at: Date;
  };
  /** Issued documents: immutable (a trigger refuses updates). */
  documents: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    kind: DocumentKind;
    policy_version_id: string | null;
    statement_id: string | null;
    payment_id: string | null;
    journey_id: string | null;
    template_version: string;
    sha256: string;
    size_bytes: number;
    file_name: string;
    issued_at: Date;
    source_event_id: string | null;
    reissue_of: string | null;
    reissue_reason: string | null;
  };
  document_files: {
    document_id: string;
    policy_id: string;
    content: Uint8Array;
  };
  document_settings: {
    company_id: string;
    environment: string;
    attach_to_emails: Generated<boolean>;
    updated_at: Date;
  };
}

/** An issued document's metadata. */
export interface DocumentRecord {
  readonly id: string;
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly kind: DocumentKind;
  readonly policyVersionId: string | null;
  readonly statementId: string | null;
  readonly paymentId: string | null;
  readonly journeyId: string | null;
  readonly templateVersion: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly fileName: string;
  readonly issuedAt: Date;
  readonly sourceEventId: string | null;
  readonly reissueOf: string | null;
  readonly reissueReason: string | null;
}

/** A document owed, leased to one worker while it makes it. */
export interface OwedRow extends OwedDocument {
  readonly id: string;
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly eventId: string;
  readonly attempts: number;
}

const documentColumns = [
  'id',
  'policy_id',
  'company_id',
  'environment',
  'kind',
  'policy_version_id',
  'statement_id',
  'payment_id',
  'journey_id',
  'template_version',
  'sha256',
  'size_bytes',
  'file_name',
  'issued_at',
  'source_event_id',
  'reissue_of',
  'reissue_reason',
] as const;

type DocumentRow = {
  id: string;
  policy_id: string;
  company_id: string;
  environment: string;
  kind: DocumentKind;
  policy_version_id: string | null;
  statement_id: string | null;
  payment_id: string | null;
  journey_id: string | null;
  template_version: string;
  sha256: string;
  size_bytes: number;
  file_name: string;
  issued_at: Date;
  source_event_id: string | null;
  reissue_of: string | null;
  reissue_reason: string | null;
};

const toDocument = (row: DocumentRow): DocumentRecord => ({
  id: row.id,
  policyId: row.policy_id,
  companyId: row.company_id,
  environment: row.environment,
  kind: row.kind,
  policyVersionId: row.policy_version_id,
  statementId: row.statement_id,
  paymentId: row.payment_id,
  journeyId: row.journey_id,
  templateVersion: row.template_version,
  sha256: row.sha256,
  sizeBytes: row.size_bytes,
  fileName: row.file_name,
  issuedAt: row.issued_at,
  sourceEventId: row.source_event_id,
  reissueOf: row.reissue_of,
  reissueReason: row.reissue_reason,
});

// ── the queue of events ──────────────────────────────────────────────────────────────────────────

export interface PendingEvent {
  readonly eventId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly createdAt: Date;
}

/** The oldest queued events, locked (SKIP LOCKED: a second worker takes the next ones). */
export async function claimPendingEvents(db: Executor, limit: number): Promise<PendingEvent[]> {
  const rows = await db
    .selectFrom('document_pending_events')
    .selectAll()
    .orderBy('created_at')
    .orderBy('event_id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((row) => ({
    eventId: row.event_id,
    companyId: row.company_id,
    environment: row.environment,
    type: row.type,
    data: typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
    createdAt: row.created_at,
  }));
}

export async function deletePendingEvents(db: Executor, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.deleteFrom('document_pending_events').where('event_id', 'in', eventIds).execute();
}

// ── documents owed ───────────────────────────────────────────────────────────────────────────────

/** Stores what events owe; a row already owed for the same event and kind stays as it is. */
export async function insertOwed(
  db: Executor,
  rows: ReadonlyArray<
    OwedDocument & { policyId: string; companyId: string; environment: string; eventId: string }
  >,
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('documents_owed')
    .values(
      rows.map((r) => ({
        policy_id: r.policyId,
        company_id: r.companyId,
        environment: r.environment,
        event_id: r.eventId,
        kind: r.kind,
        policy_version_id: r.policyVersionId,
        statement_id: r.statementId,
        payment_id: r.paymentId,
        journey_id: r.journeyId,
        due_at: r.dueAt,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.constraint('documents_owed_once').doNothing())
    .execute();
}

/**
 * Leases up to `limit` documents due by `now` and not leased to another worker, oldest due first: for
 * `leaseMs` they are this worker's; one it never finishes (a crash) is taken up again after that.
 */
export async function leaseDueOwed(
  db: Executor,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<OwedRow[]> {
  const rows = await sql<{
    id: string;
    policy_id: string;
    company_id: string;
    environment: string;
    event_id: string;
    kind: DocumentKind;
    policy_version_id: string | null;
    statement_id: string | null;
    payment_id: string | null;
    journey_id: string | null;
    due_at: Date;
    attempts: number;
  }>`
    update documents_owed o set leased_until = ${new Date(now.getTime() + leaseMs)}, attempts = o.attempts + 1
    from (
      select id, policy_id from documents_owed
      where due_at <= ${now} and (leased_until is null or leased_until <= ${now})
      order by due_at, id
      limit ${limit}
      for update skip locked
    ) due
    where o.id = due.id and o.policy_id = due.policy_id
    returning o.id, o.policy_id, o.company_id, o.environment, o.event_id, o.kind, o.policy_version_id,
      o.statement_id, o.payment_id, o.journey_id, o.due_at, o.attempts`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    policyId: r.policy_id,
    companyId: r.company_id,
    environment: r.environment,
    eventId: r.event_id,
    kind: r.kind,
    policyVersionId: r.policy_version_id,
    statementId: r.statement_id,
    paymentId: r.payment_id,
    journeyId: r.journey_id,
    dueAt: r.due_at,
    attempts: r.attempts,
  }));
}

export async function deleteOwed(db: Executor, owed: { id: string; policyId: string }): Promise<void> {
  await db
    .deleteFrom('documents_owed')
    .where('id', '=', owed.id)
    .where('policy_id', '=', owed.policyId)
    .execute();
}

/**
 * A failed attempt: its error kept, and the document leased to no one until `retryAt` (its due time
 * stays: the documents of one event are told apart by it).
 */
export async function deferOwed(
  db: Executor,
  owed: { id: string; policyId: string },
  error: string,
  retryAt: Date,
): Promise<void> {
  await db
    .updateTable('documents_owed')
    .set({ last_error: error.slice(0, 2000), leased_until: retryAt })
    .where('id', '=', owed.id)
    .where('policy_id', '=', owed.policyId)
    .execute();
}

// ── issued documents ─────────────────────────────────────────────────────────────────────────────

export interface NewDocument {
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly kind: DocumentKind;
  readonly policyVersionId: string | null;
  readonly statementId: string | null;
  readonly paymentId: string | null;
  readonly journeyId: string | null;
  readonly templateVersion: string;
  readonly sha256: string;
  readonly fileName: string;
  readonly issuedAt: Date;
  readonly sourceEventId: string | null;
  readonly reissueOf: string | null;
  readonly reissueReason: string | null;
  readonly content: Uint8Array;
}

/**
 * Stores a document and its bytes; undefined when this event's document of this kind is already
 * stored (`documents_made_once`): another worker, or an earlier attempt, made it first.
 */
export async function insertDocument(db: Executor, doc: NewDocument): Promise<DocumentRecord | undefined> {
  const row = await db
    .insertInto('documents')
    .values({
      policy_id: doc.policyId,
      company_id: doc.companyId,
      environment: doc.environment,
      kind: doc.kind,
      policy_version_id: doc.policyVersionId,
      statement_id: doc.statementId,
      payment_id: doc.paymentId,
      journey_id: doc.journeyId,
      template_version: doc.templateVersion,
      sha256: doc.sha256,
      size_bytes: doc.content.byteLength,
      file_name: doc.fileName,
      issued_at: doc.issuedAt,
      source_event_id: doc.sourceEventId,
      reissue_of: doc.reissueOf,
      reissue_reason: doc.reissueReason,
    })
    .onConflict((oc) => oc.constraint('documents_made_once').doNothing())
    .returning(documentColumns)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  await db
    .insertInto('document_files')
    .values({ document_id: row.id, policy_id: row.policy_id, content: doc.content })
    .execute();
  return toDocument(row);
}

/** The policy's documents, newest first. */
export async function listPolicyDocuments(db: Executor, policyId: string): Promise<DocumentRecord[]> {
  const rows = await db
    .selectFrom('documents')
    .select(documentColumns)
    .where('policy_id', '=', policyId)
    .orderBy('issued_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toDocument);
}

/** One of the tenant's documents by id; undefined for another tenant's or none. */
export async function findDocument(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<DocumentRecord | undefined> {
  const row = await db
    .selectFrom('documents')
    .select(documentColumns)
    .where('id', '=', id)
    .where(forTenant(tenant))
    .executeTakeFirst();
  return row === undefined ? undefined : toDocument(row);
}

/** The bytes of a stored document. */
export async function getDocumentContent(
  db: Executor,
  doc: { id: string; policyId: string },
): Promise<Uint8Array> {
  const row = await db
    .selectFrom('document_files')
    .select('content')
    .where('document_id', '=', doc.id)
    .where('policy_id', '=', doc.policyId)
    .executeTakeFirstOrThrow();
  return row.content;
}

/** Documents by id, with their bytes (an email's attachments); those gone (erased) are left out. */
export async function listDocumentFiles(
  db: Executor,
  ids: ReadonlyArray<{ documentId: string; policyId: string }>,
): Promise<Array<{ id: string; fileName: string; content: Uint8Array }>> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('documents as d')
    .innerJoin('document_files as f', (join) =>
      join.onRef('f.document_id', '=', 'd.id').onRef('f.policy_id', '=', 'd.policy_id'),
    )
    .select(['d.id', 'd.file_name', 'f.content'])
    .where(
      'd.id',
      'in',
      ids.map((i) => i.documentId),
    )
    .where(
      'd.policy_id',
      'in',
      ids.map((i) => i.policyId),
    )
    .execute();
  const order = new Map(ids.map((i, n) => [i.documentId, n]));
  return rows
    .map((r) => ({ id: r.id, fileName: r.file_name, content: r.content }))
    .sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
}

/** The documents of these policies (erasure), oldest first. */
export async function listDocumentsOfPolicies(
  db: Executor,
  policyIds: readonly string[],
): Promise<DocumentRecord[]> {
  if (policyIds.length === 0) return [];
  const rows = await db
    .selectFrom('documents')
    .select(documentColumns)
    .where('policy_id', 'in', policyIds)
    .orderBy('issued_at')
    .orderBy('id')
    .execute();
  return rows.map(toDocument);
}

/** Deletes documents; their bytes go with them. */
export async function deleteDocuments(
  db: Executor,
  documents: ReadonlyArray<{ id: string; policyId: string }>,
): Promise<void> {
  if (documents.length === 0) return;
  // One statement: a reissue and its original go together (the foreign key is checked at its end).
  await db
    .deleteFrom('documents')
    .where(
      'id',
      'in',
      documents.map((d) => d.id),
    )
    .execute();
}

// ── settings ─────────────────────────────────────────────────────────────────────────────────────

export interface DocumentSettings {
  readonly attachToEmails: boolean;
  readonly updatedAt: Date | null;
}

export async function findSettings(db: Executor, tenant: Tenant): Promise<DocumentSettings> {
  const row = await db
    .selectFrom('document_settings')
    .select(['attach_to_emails', 'updated_at'])
    .where(forTenant(tenant))
    .executeTakeFirst();
  return row === undefined
    ? { attachToEmails: false, updatedAt: null }
    : { attachToEmails: row.attach_to_emails, updatedAt: row.updated_at };
}

export async function saveSettings(
  db: Executor,
  tenant: Tenant,
  settings: { attachToEmails: boolean },
  now: Date,
): Promise<DocumentSettings> {
  const row = await db
    .insertInto('document_settings')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      attach_to_emails: settings.attachToEmails,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.constraint('document_settings_pkey').doUpdateSet({
        attach_to_emails: settings.attachToEmails,
        updated_at: now,
      }),
    )
    .returning(['attach_to_emails', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { attachToEmails: row.attach_to_emails, updatedAt: row.updated_at };
}
