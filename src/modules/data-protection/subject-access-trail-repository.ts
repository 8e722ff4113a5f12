import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant } from '../companies/index.ts';
import {
  EXPORT_BATCH_ROWS,
  none,
  parsed,
  tenantOfSubject,
  type After,
  type Subject,
} from './subject-access-repository.ts';

/* The reads of a subject access export about what was said and done: emails, the audit trail, events
 * and their webhook deliveries (see subject-access-repository.ts). */

/** Emails of the tenant to any of `recipients` (lower case), oldest first. Bodies are filtered by the caller. */
export async function pageEmails(
  db: Executor,
  subject: Subject,
  recipients: readonly string[],
  after: After<{ created_at: Date; id: string }>,
) {
  if (none(recipients)) return [];
  let q = db
    .selectFrom('outbox_emails')
    .select([
      'id',
      'template',
      'recipient',
      'subject',
      'status',
      'attempts',
      'created_at',
      'sent_at',
      'text_body',
    ])
    .where(forTenant(tenantOfSubject(subject)))
    .where(sql<string>`lower(recipient)`, 'in', recipients);
  if (after !== undefined)
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.created_at, after.id)));
  return q.orderBy('created_at').orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

/** What names the subject in the audit trail. */
export interface AuditLinks {
  readonly policyIds: readonly string[];
  /** `name:value` as the staff access hook writes `resource`: the user, the policies, their versions. */
  readonly resources: readonly string[];
}

/**
 * Audit records about the subject, by id: rows of their policies (`policy_id`), changes to their
 * account and to tables keyed by user (`row_key`, or `user_id` in the recorded fields), requests that
 * named them, their policies, versions or journeys (`resource`), and the emails and events about them
 * recorded as rows changed. The staff member's network address is left out: it is theirs, not the
 * subject's. NOTE: only `policy_id` is indexed; the rest is a scan of the trail in id
 * order, page by page, which is what an occasional export can afford.
 */
export async function pageAuditRecords(
  db: Executor,
  subject: Subject,
  links: AuditLinks,
  recipients: readonly string[],
  policyReferences: readonly string[],
  after: After<{ id: number }>,
) {
  const { policyIds, resources } = links;
  let q = db
    .selectFrom('audit_records as a')
    .select([
      'a.id',
      'a.occurred_at',
      'a.request_id',
      'a.actor',
      'a.role',
      'a.action',
      'a.resource',
      'a.outcome',
      'a.policy_id',
      'a.table_name',
      'a.row_key',
      'a.operation',
      'a.before',
      'a.after',
    ])
    .where((eb) => {
      const userId = subject.userId;
      const journeyResources = () =>
        eb
          .selectFrom('journeys')
          .select(sql<string>`'journey_reference:' || id::text`.as('resource'))
          .where('policy_id', 'in', policyIds);
      const changedOf = (field: string) =>
        sql<string | null>`coalesce(a.after ->> ${field}, a.before ->> ${field})`;
      return eb.or([
        ...(none(policyIds) ? [] : [eb('a.policy_id', 'in', policyIds)]),
        eb.and([eb('a.table_name', '=', 'users'), eb('a.row_key', '=', userId)]),
        eb(changedOf('user_id'), '=', userId),
        ...(none(resources) ? [] : [eb('a.resource', 'in', resources)]),
        ...(none(policyIds) ? [] : [eb('a.resource', 'in', journeyResources())]),
        ...(none(recipients)
          ? []
          : [
              eb.and([
                eb('a.table_name', '=', 'outbox_emails'),
                eb('a.company_id', '=', subject.companyId),
                eb(sql<string>`lower(${changedOf('recipient')})`, 'in', recipients),
              ]),
            ]),
        eb.and([
          eb('a.table_name', '=', 'events'),
          eb('a.company_id', '=', subject.companyId),
          eb.or([
            ...(none(policyReferences)
              ? []
              : [
                  eb(
                    sql<string>`coalesce(a.after, a.before) #>> '{data,policy_reference}'`,
                    'in',
                    policyReferences,
                  ),
                ]),
            eb(
              sql<string>`coalesce(a.after, a.before) #>> '{data,user_reference}'`,
              '=',
              subject.userReference,
            ),
          ]),
        ]),
      ]);
    });
  if (after !== undefined) q = q.where('a.id', '>', after.id);
  return q.orderBy('a.id').limit(EXPORT_BATCH_ROWS).execute();
}

/**
 * Events of the tenant whose data names one of the policies or the user, by sequence. NOTE: `data`
 * is not indexed: this reads the tenant's events in order (events_tenant_idx) and filters them.
 */
export async function pageEvents(
  db: Executor,
  subject: Subject,
  policyReferences: readonly string[],
  after: After<{ sequence: number }>,
) {
  let q = db
    .selectFrom('events')
    .select(['id', 'sequence', 'type', 'data', 'created_at'])
    .where(forTenant(tenantOfSubject(subject)))
    // The months since the account began, not every month of events (they are partitioned by month).
    .where('created_at', '>=', subject.since)
    .where((eb) =>
      eb.or([
        ...(none(policyReferences)
          ? []
          : [eb(sql<string>`data ->> 'policy_reference'`, 'in', policyReferences)]),
        eb(sql<string>`data ->> 'user_reference'`, '=', subject.userReference),
      ]),
    );
  if (after !== undefined) q = q.where('sequence', '>', after.sequence);
  const rows = await q.orderBy('sequence').limit(EXPORT_BATCH_ROWS).execute();
  return rows.map((r) => ({ ...r, data: parsed(r.data) }));
}

/** Webhook deliveries of some events: where each went (the endpoint's reference) and how it went. */
export async function listDeliveries(db: Executor, eventIds: readonly string[]) {
  if (none(eventIds)) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([
      'd.event_id',
      'd.delivery_reference',
      'e.endpoint_reference',
      'd.status',
      'd.attempt_count',
      'd.last_attempt_at',
      'd.last_response_status',
      'd.delivered_at',
      'd.next_attempt_at',
      'd.created_at',
    ])
    .where('d.event_id', 'in', eventIds)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .execute();
}
