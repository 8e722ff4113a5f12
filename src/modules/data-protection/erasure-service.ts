import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { withoutQueryTimeout } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { deleteAccountCredentials } from '../auth/index.ts';
import { eraseClaims, type KeptClaim } from '../claims/index.ts';
import { eraseDocuments, type KeptDocument } from '../documents/index.ts';
import { asTenant, forTenant, type DataEnvironment } from '../companies/index.ts';
import { eraseMandateHolders } from '../payments/index.ts';
import { eraseTripEvents } from '../scores/index.ts';
import { deleteCrashes, eraseMinimisedSpans, erasePositionsAndDevices } from '../telematics/index.ts';
import { pseudonymisedInput, type StoredQuoteInput } from '../quotes/rules/index.ts';
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
} from './rules/index.ts';
import {
  containsPatterns,
  enterErasureMode,
  eraseAccount,
  eraseEmails,
  eraseJourneys,
  hasJobSchema,
  listVersions,
  lockPolicies,
  lockSubject,
  scrubRows,
  lockQuotes,
  pseudonymiseQuoteText,
  updatePolicyText,
  updateVersion,
  type ErasureSubject,
  type SubjectPolicy,
  type VersionText,
} from './erasure-repository.ts';

export interface ErasureDeps {
  readonly db: Executor;
  readonly clock: Clock;
  /** RETENTION_AFTER_END_DAYS: days after the last policy end before erasure is allowed unforced. */
  readonly retentionAfterEndDays: number;
  /**
   * Forgets the access tokens' subjects this process holds (the auth service's), so that an erased
   * account's tokens are refused here from the moment the erasure commits (other processes within 5 s).
   */
  readonly forgetTokenSubjects?: () => void;
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
  /** Quotes pseudonymised: asked for with their addresses or bound to their policies. */
  readonly quotesErased: number;
  readonly documentsDeleted: number;
  /** Documents kept because the law requires them, each with its reason (the erasure's record of them). */
  readonly documentsKept: readonly KeptDocument[];
  /** Claims in progress, kept under a recorded legal hold. */
  readonly claimsKept: readonly KeptClaim[];
}

/** One erasure, once its subject is locked and allowed: who, their policies, and what names them. */
interface Erasure {
  readonly subject: ErasureSubject;
  readonly policies: readonly SubjectPolicy[];
  readonly policyIds: readonly string[];
  readonly references: readonly string[];
  readonly versions: readonly VersionText[];
  /** Every personal value of theirs, to find in free text. */
  readonly needles: readonly string[];
  readonly matcher: RegExp | undefined;
  readonly now: Date;
}

const isoDay = (at: Date): string => at.toISOString().slice(0, 10);

/** The subject, locked; 404 when unknown, 409 when already erased. */
async function lockedSubject(trx: Executor, userReference: string): Promise<ErasureSubject> {
  const subject = await lockSubject(trx, userReference);
  if (subject === undefined) throw notFound(`Policyholder ${userReference}`);
  if (subject.erasedAt !== null)
    throw new AppError(
      'CONFLICT',
      `Policyholder ${userReference} was already erased at ${subject.erasedAt.toISOString()}`,
    );
  return subject;
}

/** Their policies, locked, once the retention period has passed (or the erasure is forced); else 409. */
async function lockedPolicies(
  trx: Executor,
  subject: ErasureSubject,
  request: ErasureRequest,
  deps: ErasureDeps,
  now: Date,
): Promise<SubjectPolicy[]> {
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
      `Policyholder ${subject.userReference} may be erased from ${isoDay(decision.allowedFrom)} (${decision.allowedFrom.toISOString()}): ${String(deps.retentionAfterEndDays)} days after their last policy ended. Send force: true for a legal instruction to erase earlier.`,
    );
  return policies;
}

/** Their policies: every version's snapshot and reason, renewal terms, search text. */
async function erasePolicies(trx: Executor, erasure: Erasure): Promise<void> {
  const { subject, matcher } = erasure;
  for (const version of erasure.versions) {
    const snapshot =
      version.snapshot === null
        ? null
        : scrubJson(pseudonymiseSnapshot(version.snapshot, subject.userReference), matcher).value;
    const reason = version.reason === null ? null : scrubText(version.reason, matcher);
    await updateVersion(trx, version.id, snapshot, reason);
  }
  for (const policy of erasure.policies) {
    const terms =
      policy.renewalTerms === null || policy.renewalTerms === undefined
        ? null
        : scrubJson(pseudonymiseSnapshot(policy.renewalTerms, subject.userReference), matcher).value;
    await updatePolicyText(trx, policy.id, terms);
  }
}

/**
 * Their account, sign-in credentials, journeys, positions and devices, and emails: the records that
 * are theirs by key. Returns what was erased of each.
 */
async function eraseOwnRecords(trx: Executor, erasure: Erasure) {
  const { subject, policyIds, now } = erasure;
  const pseudonym = erasedEmail(subject.userReference);
  await eraseAccount(trx, subject.id, {
    email: pseudonym,
    username: erasedUsername(subject.userReference),
    name: ERASED_NAME,
    passwordHash: UNUSABLE_PASSWORD_HASH,
    at: now,
  });
  await deleteAccountCredentials(trx, subject.id);
  const journeysErased = await eraseJourneys(trx, policyIds);
  const positionsDeleted = await erasePositionsAndDevices(trx, policyIds);
  await eraseTripEvents(trx, policyIds);
  await eraseMinimisedSpans(trx, policyIds);
  await eraseMandateHolders(trx, policyIds, ERASED_NAME, now);
  const emailsErased = await eraseEmails(trx, {
    userId: subject.id,
    recipients: [subject.email, ...erasure.needles.filter((n) => n.includes('@'))],
    references: [subject.userReference, ...erasure.references],
    pseudonym,
    matcher: erasure.matcher,
    at: now,
  });
  return { journeysErased, positionsDeleted, emailsErased };
}

/**
 * Their quotes (asked for with one of their addresses, or bound to their policies): what was asked
 * replaced by its pseudonym (as the retention of quotes never bound does), the breakdown scrubbed.
 */
async function eraseQuotes(trx: Executor, erasure: Erasure): Promise<number> {
  const { subject, matcher, now } = erasure;
  const emails = [subject.email, ...erasure.needles.filter((n) => n.includes('@'))].map((e) =>
    e.toLowerCase(),
  );
  const quotes = await lockQuotes(trx, subject, [...new Set(emails)], erasure.policyIds);
  for (const quote of quotes)
    await pseudonymiseQuoteText(trx, quote.id, {
      input: pseudonymisedInput(quote.input as StoredQuoteInput),
      breakdown: scrubJson(quote.breakdown, matcher).value,
      at: now,
    });
  return quotes.length;
}

/** How the free-text scrubs find rows about the person (see `scrubFreeText`). */
interface Mentions {
  /** Rows of their policies. */
  readonly inPolicies: RawBuilder<unknown>;
  /** Rows whose `column` (as text) holds one of their values. */
  readonly mentions: (column: string) => RawBuilder<unknown>;
  /** Nothing written before the account existed is about them (a day's margin for clocks). */
  readonly since: Date;
}

function mentionsOf(erasure: Erasure): Mentions {
  // NOTE: lower(text) LIKE, not ILIKE: a million audit records are searched in 6 s instead of 29 s
  // (PostgreSQL 15, 19 values), the row's text lowered once instead of per pattern.
  const patterns = containsPatterns(erasure.needles.map((n) => n.toLowerCase()));
  const { policyIds } = erasure;
  return {
    inPolicies: policyIds.length > 0 ? sql`policy_id in (${sql.join(policyIds)})` : sql`false`,
    mentions: (column: string) =>
      patterns.length > 0 ? sql`lower(${sql.ref(column)}::text) like any(${patterns}::text[])` : sql`false`,
    since: new Date(erasure.subject.createdAt.getTime() - 86_400_000),
  };
}

/**
 * Free text about them elsewhere: void and credit reasons, events, deliveries, audit records.
 * Returns the audit records scrubbed.
 */
async function scrubFreeText(trx: Executor, erasure: Erasure, found: Mentions): Promise<number> {
  const { subject, references, matcher } = erasure;
  const { inPolicies, mentions, since } = found;
  const tenant = asTenant(subject.companyId, subject.environment as DataEnvironment);
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
      where: sql`${forTenant(tenant)}
            and created_at >= ${since} and (
            data ->> 'user_reference' = ${subject.userReference}
            ${references.length > 0 ? sql`or data ->> 'policy_reference' in (${sql.join(references)})` : sql``}
            or ${mentions('data')})`,
    },
    matcher,
  );
  await scrubRows(
    trx,
    { table: 'webhook_deliveries', key: 'id', textColumns: ['last_error'], where: mentions('last_error') },
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
  const rowKeys = [subject.id, ...erasure.policyIds, ...erasure.versions.map((v) => v.id)];
  return scrubRows(
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
}

/** The built-in processor sandbox keeps customers' names and emails, and request bodies; and queued jobs. */
async function scrubProcessorAndJobs(trx: Executor, erasure: Erasure, found: Mentions): Promise<void> {
  const { mentions } = found;
  const customers = await trx
    .selectFrom('payment_customers')
    .select('provider_customer_id')
    .where('user_id', '=', erasure.subject.id)
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
    erasure.matcher,
  );
  await scrubRows(
    trx,
    {
      table: 'stripe_sandbox_idempotency',
      key: sql`account || ' ' || key`,
      jsonColumns: ['body'],
      where: mentions('body'),
    },
    erasure.matcher,
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
      erasure.matcher,
    );
}

/** Everything about the subject erased, in the caller's transaction (see `erase`). */
async function eraseSubject(
  trx: Executor,
  subject: ErasureSubject,
  policies: readonly SubjectPolicy[],
  request: ErasureRequest,
  now: Date,
): Promise<ErasureResult> {
  const versions = await listVersions(
    trx,
    policies.map((p) => p.id),
  );
  const needles = personalValues(subject, [
    ...versions.map((v) => v.snapshot),
    ...policies.map((p) => p.renewalTerms),
  ]);
  const erasure: Erasure = {
    subject,
    policies,
    policyIds: policies.map((p) => p.id),
    references: policies.map((p) => p.reference),
    versions,
    needles,
    matcher: needleMatcher(needles),
    now,
  };
  await erasePolicies(trx, erasure);
  const erased = await eraseOwnRecords(trx, erasure);
  const quotesErased = await eraseQuotes(trx, erasure);
  const documents = await eraseDocuments(
    trx,
    policies.map((p) => ({ id: p.id, reference: p.reference })),
    now,
  );
  const claimsKept = await eraseClaims(trx, erasure.policyIds, now);
  await deleteCrashes(
    trx,
    erasure.policyIds,
    claimsKept.flatMap((c) => (c.crashId === null ? [] : [c.crashId])),
  );
  const found = mentionsOf(erasure);
  const auditRecordsScrubbed = await scrubFreeText(trx, erasure, found);
  await scrubProcessorAndJobs(trx, erasure, found);
  await recordEvent(
    trx,
    { companyId: subject.companyId, environment: subject.environment },
    'account.erased',
    {
      user_reference: subject.userReference,
      erased_at: now.toISOString(),
      policy_references: erasure.references,
      documents_kept: documents.documentsKept.map((d) => ({
        document_id: d.documentId,
        kind: d.kind,
        keep_until: d.keepUntil.toISOString(),
        reason: d.reason,
      })),
      claims_kept: claimsKept.map((c) => ({ claim_reference: c.claimId, state: c.state, reason: c.reason })),
    },
    now,
  );
  return {
    userReference: subject.userReference,
    erasedAt: now,
    forced: request.force,
    policyReferences: erasure.references,
    ...erased,
    quotesErased,
    auditRecordsScrubbed,
    ...documents,
    claimsKept,
  };
}

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
    const result = await withoutQueryTimeout(() =>
      db.transaction().execute(async (trx) => {
        await enterErasureMode(trx);
        const subject = await lockedSubject(trx, userReference);
        const policies = await lockedPolicies(trx, subject, request, deps, now);
        return eraseSubject(trx, subject, policies, request, now);
      }),
    );
    deps.forgetTokenSubjects?.();
    return result;
  }

  return { erase };
}

export type ErasureService = ReturnType<typeof createErasureService>;
