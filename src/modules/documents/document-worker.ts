import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { findPolicy, listVersions } from '../policies/index.ts';
import { certificateChanged, documentsOwed, type QueuedEvent } from './rules/index.ts';
import {
  DocumentWithdrawn,
  sha256Hex,
  type DocumentServiceDeps,
  type RenderedDocument,
} from './document-context.ts';
import {
  claimPendingEvents,
  deferOwed,
  deleteOwed,
  deletePendingEvents,
  insertDocument,
  insertOwed,
  leaseDueOwed,
  type DocumentRecord,
  type OwedRow,
  type PendingEvent,
} from './document-repository.ts';

/** Events turned into documents owed per transaction. */
const EXPAND_BATCH = 200;
/** Documents leased per pass; each is rendered outside any transaction, then stored in its own. */
const MAKE_BATCH = 16;
/** A leased document not stored by then (its worker died) is taken up again by any worker. */
export const LEASE_MS = 60_000;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** A failed attempt is retried after 30 s, doubling to at most an hour: a document owed is never dropped. */
const retryDelayMs = (attempts: number): number =>
  Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

/** Called in the transaction that stored the last document due of an event (attachments email). */
export type EventDocumentsMade = (
  trx: Executor,
  event: { eventId: string; policyId: string; companyId: string; environment: string; dueAt: Date },
) => Promise<void>;

/** Whether the adjustment `versionId` changed what the certificate states, against the version before it. */
async function adjustmentChangesCertificate(
  trx: Executor,
  policyId: string,
  versionId: string,
): Promise<boolean> {
  const versions = await listVersions(trx, policyId);
  const index = versions.findIndex((v) => v.id === versionId);
  const adjusted = versions[index];
  if (adjusted === undefined) return true;
  const before = versions
    .slice(0, index)
    .reverse()
    .find((v) => v.versionType === 'nb' || v.versionType === 'mta' || v.versionType === 'rn');
  return before === undefined ? true : certificateChanged(before.snapshot, adjusted.snapshot);
}

/** The documents one queued event owes, with the policy it names; none when it names no policy of its tenant. */
async function owedOf(trx: Executor, event: PendingEvent) {
  const reference = event.data['policy_reference'];
  if (typeof reference !== 'string') return [];
  const tenant = asTenant(event.companyId, event.environment as DataEnvironment);
  const policy = await findPolicy(trx, tenant, reference);
  if (policy === undefined) return [];
  const version = event.data['policy_version_reference'];
  const changed =
    event.type === 'policy.adjusted' && typeof version === 'string'
      ? await adjustmentChangesCertificate(trx, policy.id, version)
      : false;
  const queued: QueuedEvent = { type: event.type, data: event.data, createdAt: event.createdAt };
  return documentsOwed(queued, { certificateChanged: changed }).map((owed) => ({
    ...owed,
    policyId: policy.id,
    companyId: event.companyId,
    environment: event.environment,
    eventId: event.eventId,
  }));
}

/**
 * The documents worker: queued events become documents owed (one transaction a batch), and documents
 * due are rendered and stored (at least once, stored once: `documents_made_once`).
 */
export function createDocumentWorker(deps: DocumentServiceDeps, onEventMade: EventDocumentsMade) {
  const { db, clock, logger } = deps;

  /** Turns up to a batch of queued events into documents owed; the number of events taken. */
  async function expandEvents(): Promise<number> {
    return inTransaction(db, async (trx) => {
      const events = await claimPendingEvents(trx, EXPAND_BATCH);
      const rows = [];
      for (const event of events) rows.push(...(await owedOf(trx, event)));
      await insertOwed(trx, rows, clock.now());
      await deletePendingEvents(
        trx,
        events.map((e) => e.eventId),
      );
      return events.length;
    });
  }

  /**
   * Stores one rendered document (none when it was withdrawn) and drops what owed it, in one
   * transaction; when it was the last document due of its event, tells `onEventMade`. The event's lock
   * orders the workers that store its documents, so that exactly one of them sees none left.
   */
  async function store(owed: OwedRow, rendered: RenderedDocument | undefined, issuedAt: Date) {
    return inTransaction(db, async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${owed.eventId}, 0))`.execute(trx);
      const stored =
        rendered === undefined
          ? undefined
          : await insertDocument(trx, {
              policyId: owed.policyId,
              companyId: owed.companyId,
              environment: owed.environment,
              kind: owed.kind,
              policyVersionId: owed.policyVersionId,
              statementId: owed.statementId,
              paymentId: owed.paymentId,
              journeyId: owed.journeyId,
              templateVersion: rendered.templateVersion,
              sha256: sha256Hex(rendered.bytes),
              fileName: rendered.fileName,
              issuedAt,
              sourceEventId: owed.eventId,
              reissueOf: null,
              reissueReason: null,
              content: rendered.bytes,
            });
      await deleteOwed(trx, owed);
      const left = await trx
        .selectFrom('documents_owed')
        .select('id')
        .where('event_id', '=', owed.eventId)
        .where('policy_id', '=', owed.policyId)
        .where('due_at', '<=', issuedAt)
        .limit(1)
        .execute();
      if ((stored !== undefined || rendered === undefined) && left.length === 0)
        await onEventMade(trx, {
          eventId: owed.eventId,
          policyId: owed.policyId,
          companyId: owed.companyId,
          environment: owed.environment,
          dueAt: owed.dueAt,
        });
      return stored;
    });
  }

  /** Makes one leased document; a failure is recorded and the document retried later. */
  async function makeOne(owed: OwedRow): Promise<DocumentRecord | undefined> {
    const issuedAt = clock.now();
    try {
      const rendered = await deps.render(db, { ...owed, issuedAt });
      return await store(owed, rendered, issuedAt);
    } catch (error) {
      if (error instanceof DocumentWithdrawn) {
        logger.info(
          { owed: owed.id, kind: owed.kind, reason: error.message },
          'a document owed was withdrawn',
        );
        return await store(owed, undefined, issuedAt);
      }
      const message = error instanceof Error ? error.message : String(error);
      logger.error({ err: error, owed: owed.id, kind: owed.kind }, 'a document owed could not be made');
      await deferOwed(db, owed, message, new Date(issuedAt.getTime() + retryDelayMs(owed.attempts)));
      return undefined;
    }
  }

  /*
   * NOTE: each lane takes the batch's next document, reads what it states, has it rendered and stores it,
   * so documents render on every render thread at once. Each is still leased once and stored in its own
   * transaction.
   */
  const lanes = Math.max(1, deps.makeConcurrency ?? 1);

  /** Makes up to a batch of documents due now; the number leased. */
  async function makeDue(): Promise<number> {
    const owed = await leaseDueOwed(db, clock.now(), LEASE_MS, MAKE_BATCH);
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let one = owed[next++]; one !== undefined; one = owed[next++]) await makeOne(one);
    };
    await Promise.all(Array.from({ length: Math.min(lanes, owed.length) }, lane));
    return owed.length;
  }

  /** One pass: every queued event expanded, then every document due made (batch by batch). */
  async function runPending(signal?: AbortSignal): Promise<void> {
    while ((await expandEvents()) === EXPAND_BATCH && signal?.aborted !== true);
    while ((await makeDue()) === MAKE_BATCH && signal?.aborted !== true);
  }

  let poller: Poller | undefined;
  return {
    runPending,
    start(): void {
      poller ??= startPolling({
        intervalMs: deps.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
        run: runPending,
        onError: (error) => {
          logger.error({ err: error }, 'documents worker pass failed');
        },
      });
    },
    async stop(timeoutMs: number): Promise<void> {
      await poller?.stop(timeoutMs);
      poller = undefined;
    },
  };
}
