import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Documents: the PDFs a policy is issued (certificate, schedule, IPID, statement of fact, renewal and
 * cancellation notices, statements, credit notes), owed in the change's transaction and made by the
 * worker after it commits.
 *
 * - `document_pending_events`: a trigger on `events` copies each event that owes documents (its type
 *   listed below) into this queue, in the transaction that recorded it: a change that commits owes its
 *   documents, one that rolls back owes none, and no module has to call this one. The copy carries the
 *   event's data, so the queue never depends on the events' retention.
 * - `documents_owed`: the worker turns a queued event into one row per document it owes (a rule decides
 *   which, e.g. a certificate on an adjustment only if car, drivers, use or term changed), each due at
 *   once or, for a renewal written early, at the new term's start; the event's row goes in the same
 *   transaction. `documents_owed_once` keeps one row per event and kind.
 * - `documents`: what was issued, immutable (a trigger refuses updates; erasure may delete), with its
 *   kind, template version, what it belongs to, SHA-256 and size. `documents_made_once` stores an owed
 *   document once however many workers make it; a reissue has no event and names the original.
 * - `document_files`: the bytes, beside the metadata, so the audit trail records the metadata of a
 *   reissue or an erasure without copying the PDF.
 * - `document_settings`: a company's choices per environment (attach the PDFs to the emails).
 * - `outbox_emails.attachments`: the documents an email carries, as `[{document_id, policy_id}]`,
 *   read when it is sent.
 */

/** Event types that owe documents (see documents/rules/documents-owed.ts). */
const DOCUMENT_EVENT_TYPES = [
  'policy.created',
  'policy.adjusted',
  'policy.renewal_scheduled',
  'policy.renewed',
  'policy.cancelled',
  'statement.created',
  'journey.voided',
  'payment.refunded',
] as const;

const KINDS = [
  'certificate',
  'schedule',
  'ipid',
  'statement_of_fact',
  'renewal_notice',
  'statement',
  'credit_note',
  'cancellation_notice',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  const types = sql.join(DOCUMENT_EVENT_TYPES.map((t) => sql.lit(t)));
  const kinds = sql.join(KINDS.map((k) => sql.lit(k)));
  await sql`
    create table document_pending_events (
      event_id uuid not null constraint document_pending_events_pkey primary key,
      company_id uuid not null,
      environment text not null,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index document_pending_events_order on document_pending_events (created_at, event_id)`.execute(
    db,
  );
  await sql`
    create function documents_queue_event() returns trigger language plpgsql as $$
    begin
      insert into document_pending_events (event_id, company_id, environment, type, data, created_at)
      values (new.id, new.company_id, new.environment, new.type, new.data, new.created_at);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger events_documents_queue after insert on events
    for each row when (new.type in (${types})) execute function documents_queue_event()`.execute(db);

  await sql`
    create table documents_owed (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null constraint documents_owed_policy_fkey references policies (id),
      company_id uuid not null,
      environment text not null,
      event_id uuid not null,
      kind text not null constraint documents_owed_kind_known check (kind in (${kinds})),
      policy_version_id uuid,
      statement_id uuid,
      payment_id uuid,
      journey_id uuid,
      due_at timestamptz not null,
      attempts integer not null default 0,
      leased_until timestamptz,
      last_error text,
      created_at timestamptz not null,
      constraint documents_owed_pkey primary key (id, policy_id),
      constraint documents_owed_once unique (policy_id, event_id, kind)
    )`.execute(db);
  await sql`create index documents_owed_due on documents_owed (due_at)`.execute(db);

  await sql`
    create table documents (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null constraint documents_policy_fkey references policies (id),
      company_id uuid not null,
      environment text not null,
      kind text not null constraint documents_kind_known check (kind in (${kinds})),
      policy_version_id uuid,
      statement_id uuid,
      payment_id uuid,
      journey_id uuid,
      template_version text not null,
      sha256 text not null constraint documents_sha256_hex check (sha256 ~ '^[0-9a-f]{64}$'),
      size_bytes integer not null constraint documents_size_positive check (size_bytes > 0),
      file_name text not null,
      issued_at timestamptz not null,
      source_event_id uuid,
      reissue_of uuid,
      reissue_reason text,
      constraint documents_pkey primary key (id, policy_id),
      constraint documents_made_once unique (policy_id, source_event_id, kind),
      constraint documents_reissue_fkey foreign key (reissue_of, policy_id) references documents (id, policy_id),
      constraint documents_version_fkey foreign key (policy_version_id, policy_id)
        references policy_versions (id, policy_id),
      constraint documents_statement_fkey foreign key (statement_id, policy_id)
        references statements (id, policy_id),
      constraint documents_origin check ((source_event_id is null) <> (reissue_of is null))
    )`.execute(db);
  await sql`create index documents_by_policy on documents (policy_id, issued_at)`.execute(db);
  await sql`
    create table document_files (
      document_id uuid not null,
      policy_id uuid not null,
      content bytea not null,
      constraint document_files_pkey primary key (document_id, policy_id),
      constraint document_files_document_fkey foreign key (document_id, policy_id)
        references documents (id, policy_id) on delete cascade
    )`.execute(db);
  // NOTE: a document is evidence of what was issued: never rewritten, only deleted (by erasure).
  await sql`
    create function documents_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'issued documents are immutable' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`
    create trigger documents_no_update before update on documents
    for each row execute function documents_immutable()`.execute(db);
  await sql`
    create trigger document_files_no_update before update on document_files
    for each row execute function documents_immutable()`.execute(db);

  await sql`
    create table document_settings (
      company_id uuid not null constraint document_settings_company_fkey references companies (id),
      environment text not null,
      attach_to_emails boolean not null default false,
      updated_at timestamptz not null,
      constraint document_settings_pkey primary key (company_id, environment)
    )`.execute(db);

  await sql`alter table outbox_emails add column attachments jsonb`.execute(db);

  await auditTable(db, 'documents');
  await auditTable(db, 'document_settings');
}
