import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { withoutQueryTimeout } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import {
  decideErasure,
  ERASED_NAME,
  erasedEmail,
  erasedUsername,
  needleMatcher,
  personalValues,
  pseudonymiseSnapshot,
  scrubJson,
  scrubText,
  UNUSABLE_PASSWORD_HASH,
} from './erasure.ts';
import {
  containsPatterns,
  enterErasureMode,
  erasePositionsAndDevices,
  eraseAccount,
  eraseEmails,
  eraseJourneys,
  hasJobSchema,
  listVersions,
  lockPolicies,
  lockSubject,
  scrubRows,
  updatePolicyText,
  updateVersion,
} from './erasure-repository.ts';

export interface ErasureDeps {
  readonly db: Executor;
  readonly clock: Clock;
  /** RETENTION_AFTER_END_DAYS: days after the last policy end before erasure is allowed unforced. */
  readonly retentionAfterEndDays: number;
}

export interface ErasureRequest {
  readonly reason: string;
  readonly force: boolean;
}

export interface ErasureResult {
  readonly userReference: string;
  readonly erasedAt: Date;
  readonly forced: boolean;
  readonly policyReferences: readonly string[];
  readonly journeysErased: number;
  readonly positionsDeleted: number;
  readonly emailsErased: number;
  readonly auditRecordsScrubbed: number;
}

const isoDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Erasure of a policyholder (issue 21 item 4): see docs/data-protection.md. */
export function createErasureService(deps: ErasureDeps) {
  const { db, clock } = deps;

  /**
   * Pseudonymises everything about the account in one transaction: the account (no more sign-in), every
   * version of their policies, their journeys' routes and places, raw positions, devices' VIN, emails,
   * events, audit records, the processor sandbox and queued jobs that name them; financial records
   * stay. Emits `account.erased`. 404 unknown, 409 already erased or retention not yet passed.
   */
  async function erase(userReference: string, request: ErasureRequest): Promise<ErasureResult> {
    const now = clock.now();
    // NOTE: without DATABASE_QUERY_TIMEOUT_MS, as migrations: the free-text search reads whole tables
    // (the audit trail), which on a large database rightly takes longer than a request's bound, and a
    // timed-out erasure would have to be sent again to do the same work. It is rare and admin-only.
    return withoutQueryTimeout(() =>
      db.transaction().execute(async (trx) => {
        await enterErasureMode(trx);
        const subject = await lockSubject(trx, userReference);
        if (subject === undefined) throw notFound(`Policyholder ${userReference}`);
        if (subject.erasedAt !== null)
          throw new AppError(
            'CONFLICT',
            `Policyholder ${userReference} was already erased at ${subject.erasedAt.toISOString()}`,
          );
        const policies = await lockPolicies(trx, subject.id);
        const decision = decideErasure({
          policyEnds: policies.map((p) => p.currentEndAt),
          now,
          retentionDays: deps.retentionAfterEndDays,
          force: request.force,
        });
        if (!decision.ok)
          throw new AppError(
            'CONFLICT',
            `Policyholder ${userReference} may be erased from ${isoDay(decision.allowedFrom)} (${decision.allowedFrom.toISOString()}): ${String(deps.retentionAfterEndDays)} days after their last policy ended. Send force: true for a legal instruction to erase earlier.`,
          );

        const policyIds = policies.map((p) => p.id);
        const references = policies.map((p) => p.reference);
        const versions = await listVersions(trx, policyIds);
        const needles = personalValues(subject, [
          ...versions.map((v) => v.snapshot),
          ...policies.map((p) => p.renewalTerms),
        ]);
        const matcher = needleMatcher(needles);
        const pseudonym = erasedEmail(subject.userReference);
        const emails = needles.filter((n) => n.includes('@'));

        // Their policies: every version's snapshot and reason, renewal terms, search text.
        for (const version of versions) {
          const snapshot =
            version.snapshot === null
              ? null
              : scrubJson(pseudonymiseSnapshot(version.snapshot, subject.userReference), matcher).value;
          const reason = version.reason === null ? null : scrubText(version.reason, matcher);
          await updateVersion(trx, version.id, snapshot, reason);
        }
        for (const policy of policies) {
          const terms =
            policy.renewalTerms === null || policy.renewalTerms === undefined
              ? null
              : scrubJson(pseudonymiseSnapshot(policy.renewalTerms, subject.userReference), matcher).value;
          await updatePolicyText(trx, policy.id, terms);
        }

        await eraseAccount(trx, subject.id, {
          email: pseudonym,
          username: erasedUsername(subject.userReference),
          name: ERASED_NAME,
          passwordHash: UNUSABLE_PASSWORD_HASH,
          at: now,
        });
        const journeysErased = await eraseJourneys(trx, policyIds);
        const positionsDeleted = await erasePositionsAndDevices(trx, policyIds);
        const emailsErased = await eraseEmails(trx, {
          userId: subject.id,
          recipients: [subject.email, ...emails],
          references: [subject.userReference, ...references],
          pseudonym,
          matcher,
          at: now,
        });

        // NOTE: lower(text) LIKE, not ILIKE: a million audit records are searched in 6 s instead of 29 s
        // (PostgreSQL 15, 19 values), the row's text lowered once instead of per pattern.
        const patterns = containsPatterns(needles.map((n) => n.toLowerCase()));
        const inPolicies = policyIds.length > 0 ? sql`policy_id in (${sql.join(policyIds)})` : sql`false`;
        const mentions = (column: string) =>
          patterns.length > 0
            ? sql`lower(${sql.ref(column)}::text) like any(${patterns}::text[])`
            : sql`false`;
        // Nothing written before the account existed is about them (a day's margin for clocks).
        const since = new Date(subject.createdAt.getTime() - 86_400_000);

        // Free text about them elsewhere: void and credit reasons, events, deliveries, audit records.
        await scrubRows(
          trx,
          {
            table: 'journeys',
            key: 'id',
            textColumns: ['void_reason'],
            where: sql`${inPolicies} and void_reason is not null`,
          },
          matcher,
        );
        await scrubRows(
          trx,
          { table: 'journey_voids', key: 'id', textColumns: ['reason'], where: inPolicies },
          matcher,
        );
        await scrubRows(
          trx,
          { table: 'policy_credits', key: 'id', textColumns: ['reason'], where: inPolicies },
          matcher,
        );
        await scrubRows(
          trx,
          {
            table: 'events',
            key: 'id',
            jsonColumns: ['data'],
            where: sql`company_id = ${subject.companyId} and environment = ${subject.environment}
            and created_at >= ${since} and (
            data ->> 'user_reference' = ${subject.userReference}
            ${references.length > 0 ? sql`or data ->> 'policy_reference' in (${sql.join(references)})` : sql``}
            or ${mentions('data')})`,
          },
          matcher,
        );
        await scrubRows(
          trx,
          {
            table: 'webhook_deliveries',
            key: 'id',
            textColumns: ['last_error'],
            where: mentions('last_error'),
          },
          matcher,
        );
        await scrubRows(
          trx,
          {
            table: 'webhook_delivery_attempts',
            key: 'id',
            textColumns: ['response_body', 'error'],
            where: sql`${mentions('response_body')} or ${mentions('error')}`,
          },
          matcher,
        );
        const rowKeys = [subject.id, ...policyIds, ...versions.map((v) => v.id)];
        const auditRecordsScrubbed = await scrubRows(
          trx,
          {
            table: 'audit_records',
            key: 'id',
            jsonColumns: ['before', 'after'],
            where: sql`occurred_at >= ${since} and (${inPolicies} or row_key in (${sql.join(rowKeys)})
            or ${mentions('before')} or ${mentions('after')})`,
          },
          matcher,
        );

        // The built-in processor sandbox keeps customers' names and emails, and request bodies.
        const customers = await trx
          .selectFrom('payment_customers')
          .select('provider_customer_id')
          .where('user_id', '=', subject.id)
          .execute();
        const customerIds = customers.map((c) => c.provider_customer_id);
        await scrubRows(
          trx,
          {
            table: 'stripe_sandbox_objects',
            key: 'id',
            jsonColumns: ['data'],
            where:
              customerIds.length > 0
                ? sql`id in (${sql.join(customerIds)}) or data ->> 'customer' in (${sql.join(customerIds)}) or ${mentions('data')}`
                : mentions('data'),
          },
          matcher,
        );
        await scrubRows(
          trx,
          {
            table: 'stripe_sandbox_idempotency',
            key: sql`account || ' ' || key`,
            jsonColumns: ['body'],
            where: mentions('body'),
          },
          matcher,
        );
        if (await hasJobSchema(trx))
          await scrubRows(
            trx,
            {
              table: 'pgboss.job',
              key: 'id',
              jsonColumns: ['data', 'output'],
              where: sql`${mentions('data')} or ${mentions('output')}`,
            },
            matcher,
          );

        await recordEvent(
          trx,
          { companyId: subject.companyId, environment: subject.environment },
          'account.erased',
          {
            user_reference: subject.userReference,
            erased_at: now.toISOString(),
            policy_references: references,
          },
          now,
        );
        return {
          userReference: subject.userReference,
          erasedAt: now,
          forced: request.force,
          policyReferences: references,
          journeysErased,
          positionsDeleted,
          emailsErased,
          auditRecordsScrubbed,
        };
      }),
    );
  }

  return { erase };
}

export type ErasureService = ReturnType<typeof createErasureService>;
