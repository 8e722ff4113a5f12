import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';
import { findPolicyReference } from '../policies/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import { createClaimFaultService } from './claim-fault-service.ts';
import { createClaimHolderService } from './claim-holder-service.ts';
import { createClaimLifeService } from './claim-life-service.ts';
import { lockOverdueDrafts, updateClaim } from './claim-repository.ts';
import { CLAIM_RETENTION_QUEUE, pseudonymiseEndedClaims } from './claim-retention.ts';
import { claimEventData } from './claim-views.ts';
import { serveOwedNotices } from './first-notice.ts';

/**
 * Between the worker's passes when nothing was owed. A crash's commit wakes the loop at once (the
 * change feed); the passes find what a lost notification left, and drafts gone overdue.
 */
const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** The change feed's channel a crash's commit notifies (migration 0061's trigger). */
const CLAIMS_OWED_CHANNEL = 'milepost_claims_owed';
const REFERRALS_PER_PASS = 100;

/** Drafts unanswered past their company's response time go to staff (`referred_at`, `claim.updated`). */
async function referOverdue(deps: ClaimServiceDeps, now: Date): Promise<number> {
  return inTransaction(deps.db, async (trx) => {
    const overdue = await lockOverdueDrafts(trx, now, REFERRALS_PER_PASS);
    for (const o of overdue) {
      const row = await updateClaim(
        trx,
        { id: o.id, policyId: o.policy_id },
        { referred_at: now, updated_at: now },
      );
      const reference = (await findPolicyReference(trx, o.policy_id)) ?? '';
      await recordEvent(
        trx,
        { companyId: o.company_id, environment: o.environment },
        'claim.updated',
        claimEventData(row, reference, 'referred_to_staff'),
        now,
      );
    }
    return overdue.length;
  });
}

/**
 * Claims: the first notice of loss a crash owes (first-notice.ts), a policy's claims as its policyholder
 * answers and reports them (claim-holder-service.ts), and their life as staff drive it
 * (claim-life-service.ts); the worker's loop over notices owed and unanswered drafts.
 */
export function createClaimService(deps: ClaimServiceDeps) {
  const { clock, jobs } = deps;
  let poller: Poller | undefined;
  jobs?.define({
    name: CLAIM_RETENTION_QUEUE,
    options: { retryLimit: 3, retryDelay: 300, expireInSeconds: 3600 },
  });

  /** One pass of the worker: the notices owed and due, then overdue drafts (tests call it with their time). */
  const runOnce = async (now: Date = clock.now()) => {
    const notices = await serveOwedNotices(deps, now);
    const referred = await referOverdue(deps, now);
    return { ...notices, referred };
  };

  return {
    ...createClaimHolderService(deps),
    ...createClaimLifeService(deps),
    ...createClaimFaultService(deps),
    runOnce,

    /** Ended claims past their company's retention at `now`, pseudonymised (the nightly job); how many. */
    pseudonymiseEnded: (now: Date = clock.now()) => pseudonymiseEndedClaims(deps.db, now),

    /**
     * Starts the worker's loop: a pass as soon as a crash commits (the change feed), passes back to back
     * while notices are owed, else every second; and the nightly retention of ended claims (03:40
     * Europe/London).
     */
    async registerWorkers(): Promise<void> {
      if (jobs !== undefined) {
        await jobs.work(CLAIM_RETENTION_QUEUE, async () => {
          await pseudonymiseEndedClaims(deps.db, clock.now());
        });
        await jobs.schedule(CLAIM_RETENTION_QUEUE, '40 3 * * *', {}, 'Europe/London');
      }
      poller ??= startPolling({
        intervalMs: deps.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
        run: async (signal) => {
          while (!signal.aborted) {
            const pass = await runOnce(clock.now());
            if (pass.served + pass.failed === 0 || pass.failed > 0) break;
          }
        },
        onError: (error) => deps.logger?.error({ err: error }, 'claims worker pass failed'),
      });
      // A notification, or a feed that reconnected (notifications may have been missed meanwhile): look now.
      const wake = () => poller?.wake();
      deps.changes?.subscribe(CLAIMS_OWED_CHANNEL, { onChange: wake, onReset: wake });
    },

    async stopWorkers(timeoutMs: number): Promise<void> {
      const running = poller;
      poller = undefined;
      await running?.stop(timeoutMs);
    },
  };
}

export type ClaimService = ReturnType<typeof createClaimService>;
