import { sql, type Generated, type Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import { newId } from '../../platform/ids.ts';
import { jsonRows } from '../../platform/db/json-rows.ts';

export interface OutboxTables {
  outbox_emails: {
    id: Generated<string>;
    company_id: string | null;
    environment: string | null;
    template: string;
    recipient: string;
    /** Null while only `data` is stored (rendered when sent). */
    subject: string | null;
    text_body: string | null;
    html_body: string | null;
    /** The template's values, for an email rendered when it is sent rather than when it is queued. */
    data: unknown;
    status: 'pending' | 'sent' | 'logged' | 'failed';
    attempts: Generated<number>;
    last_error: string | null;
    created_at: Date;
    sent_at: Date | null;
    /** The account the email is for, when its sender named it (migration 0040). */
    user_id: string | null;
    /** Documents sent with it, read when it is sent (migration 0042). */
    attachments: string | AttachmentRef[] | null;
  };
}

/** A stored document an email carries: read through the documents module when the email is sent. */
export interface AttachmentRef {
  readonly document_id: string;
  readonly policy_id: string;
}

export interface OutboxEmail {
  readonly id: string;
  readonly template: string;
  readonly recipient: string;
  readonly subject: string | null;
  readonly text: string | null;
  readonly html: string | null;
  /** The template's values when the email is rendered as it is sent. */
  readonly data: unknown;
  readonly status: 'pending' | 'sent' | 'logged' | 'failed';
  readonly attempts: number;
  /** Documents sent with it; empty for most. */
  readonly attachments: readonly AttachmentRef[];
}

export interface NewEmail {
  readonly companyId: string | null;
  readonly environment: string | null;
  readonly template: string;
  readonly recipient: string;
  /** The account the email is for: no email is stored, or sent, for an account that has been erased. */
  readonly userId?: string | undefined;
  /** Rendered now, or `data` for the template to render when it is sent. */
  readonly content: { subject: string; text: string; html: string } | { data: object };
  readonly at: Date;
  readonly attachments?: readonly AttachmentRef[] | undefined;
}

/**
 * Pending emails in one statement; the ids of those stored, in the order given. One JSON parameter however
 * many rows (a billing chunk queues a thousand; platform/db/json-rows.ts), which PostgreSQL binds far
 * faster than a VALUES list. An email for an account that has been erased is not stored: its sender read
 * the address before the erasure committed (a transaction that waited for the erasure's locks).
 */
export async function insertEmails(db: Executor, emails: readonly NewEmail[]): Promise<string[]> {
  if (emails.length === 0) return [];
  const ids = emails.map(() => newId());
  const stored = await sql<{ id: string }>`
    insert into outbox_emails (id, company_id, environment, template, recipient, subject, text_body,
      html_body, data, status, created_at, user_id, attachments)
    select id, company_id, environment, template, recipient, subject, text_body, html_body, data, 'pending',
      to_timestamp(created_ms / 1000), user_id, attachments
    from json_to_recordset(${jsonRows(
      emails.map((e, i) => {
        const rendered = 'subject' in e.content ? e.content : undefined;
        return {
          id: ids[i],
          company_id: e.companyId,
          environment: e.environment,
          template: e.template,
          recipient: e.recipient,
          subject: rendered?.subject ?? null,
          text_body: rendered?.text ?? null,
          html_body: rendered?.html ?? null,
          data: 'data' in e.content ? e.content.data : null,
          created_ms: e.at.getTime(),
          user_id: e.userId ?? null,
          attachments: e.attachments === undefined || e.attachments.length === 0 ? null : e.attachments,
        };
      }),
    )}::json) as e(id uuid, company_id uuid, environment text, template text, recipient text, subject text,
      text_body text, html_body text, data jsonb, created_ms float8, user_id uuid, attachments jsonb)
    where not exists (select 1 from users u where u.id = e.user_id and u.erased_at is not null)
    returning id`.execute(db);
  if (stored.rows.length === ids.length) return ids;
  const kept = new Set(stored.rows.map((row) => row.id));
  return ids.filter((id) => kept.has(id));
}

const emailColumns = [
  'id',
  'template',
  'recipient',
  'subject',
  'text_body',
  'html_body',
  'data',
  'status',
  'attempts',
  'attachments',
] as const;

const toEmail = (
  row: Pick<Selectable<OutboxTables['outbox_emails']>, (typeof emailColumns)[number]>,
): OutboxEmail => ({
  id: row.id,
  template: row.template,
  recipient: row.recipient,
  subject: row.subject,
  text: row.text_body,
  html: row.html_body,
  data: row.data,
  status: row.status,
  attempts: row.attempts,
  attachments:
    row.attachments === null
      ? []
      : typeof row.attachments === 'string'
        ? (JSON.parse(row.attachments) as AttachmentRef[])
        : row.attachments,
});

/**
 * Locks the row so that two workers never send the same email at once. `erasedAs`: the pseudonym of the
 * account the email is for, once that account has been erased (null otherwise).
 */
export async function findEmailForDelivery(
  db: Executor,
  id: string,
): Promise<(OutboxEmail & { readonly erasedAs: string | null }) | undefined> {
  const row = await db
    .selectFrom('outbox_emails')
    .select(emailColumns)
    // users.erased_at is not in the accounts module's table type (migration 0029).
    .select(
      sql<string | null>`(select u.email from users u
        where u.id = outbox_emails.user_id and u.erased_at is not null)`.as('erased_as'),
    )
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row === undefined ? undefined : { ...toEmail(row), erasedAs: row.erased_as };
}

/**
 * An email not to be sent because its account was erased after it was queued: it keeps nothing of the
 * person (the recipient becomes the account's pseudonym; subject, bodies and values go), as the erasure
 * leaves the emails it finds.
 */
export async function withdrawEmail(db: Executor, id: string, pseudonym: string): Promise<void> {
  await db
    .updateTable('outbox_emails')
    .set({
      recipient: pseudonym,
      subject: '[erased]',
      text_body: null,
      html_body: null,
      data: null,
      status: 'failed',
      last_error: 'not sent: the recipient was erased',
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Marks an email delivered. A sent email's body is dropped, since it may hold a temporary password;
 * a logged one (no SMTP) keeps it, as the outbox is then how a developer reads it. `rendered`: the
 * content of an email rendered as it was sent (its subject is kept either way).
 */
export async function markEmailDelivered(
  db: Executor,
  id: string,
  status: 'sent' | 'logged',
  at: Date,
  rendered?: { subject: string; text: string; html: string },
): Promise<void> {
  await db
    .updateTable('outbox_emails')
    .set((eb) => ({
      status,
      sent_at: at,
      attempts: eb('attempts', '+', 1),
      last_error: null,
      ...(rendered === undefined ? {} : { subject: rendered.subject }),
      ...(status === 'sent'
        ? { text_body: null, html_body: null, data: null }
        : rendered === undefined
          ? {}
          : { text_body: rendered.text, html_body: rendered.html }),
    }))
    .where('id', '=', id)
    .execute();
}

export async function markEmailAttemptFailed(
  db: Executor,
  id: string,
  error: string,
  final: boolean,
): Promise<void> {
  await db
    .updateTable('outbox_emails')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_error: error.slice(0, 1000),
      ...(final ? { status: 'failed' as const } : {}),
    }))
    .where('id', '=', id)
    .execute();
}

export async function listEmails(db: Executor, filter: { recipient?: string }): Promise<OutboxEmail[]> {
  let query = db.selectFrom('outbox_emails').select(emailColumns).orderBy('created_at');
  if (filter.recipient !== undefined) query = query.where('recipient', '=', filter.recipient);
  return (await query.execute()).map(toEmail);
}

/** An email as an operator reads it in the outbox. */
export interface OutboxEntry extends OutboxEmail {
  readonly environment: string | null;
  readonly createdAt: Date;
  readonly sentAt: Date | null;
  readonly lastError: string | null;
}

/** The newest emails first, for one recipient (case-insensitive) or all. */
export async function listRecentEmails(
  db: Executor,
  filter: { recipient?: string | undefined; limit: number },
): Promise<OutboxEntry[]> {
  let query = db
    .selectFrom('outbox_emails')
    .select([...emailColumns, 'environment', 'created_at', 'sent_at', 'last_error'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit);
  if (filter.recipient !== undefined)
    query = query.where(sql<string>`lower(recipient)`, '=', filter.recipient.toLowerCase());
  return (await query.execute()).map((row) => ({
    ...toEmail(row),
    environment: row.environment,
    createdAt: row.created_at,
    sentAt: row.sent_at,
    lastError: row.last_error,
  }));
}
