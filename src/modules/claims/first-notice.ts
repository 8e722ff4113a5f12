/**
 * First notice of loss: each crash opens one draft claim, holding the crash file, and tells the
 * policyholder. The crash's own transaction recorded the notice owed (a trigger, migration 0049), so a
 * crash is never without its claim: the worker takes owed notices under a lease, and a claim per crash
 * (`claims_one_per_crash`) keeps a notice taken twice, after a worker died, to one claim.
 */
import { forEachConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import { claimCrashDetectedEmail } from '../notifications/index.ts';
import { findPolicyholderId, listVersions } from '../policies/index.ts';
import { crashTrace, findCrash, type CrashRecord } from '../telematics/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import {
  deleteOwed,
  findClaimOfCrash,
  findSettings,
  insertClaim,
  leaseOwed,
  postponeOwed,
  updateClaim,
  type CrashFile,
} from './claim-repository.ts';
import { claimEventData } from './claim-views.ts';
import {
  coverSummary,
  DEFAULT_RESPONSE_HOURS,
  respondBy,
  traceFinalAt,
  traceWindow,
  versionInForce,
} from './rules/index.ts';
import { TRACE_MAX_POSITIONS } from './rules/crash-file.ts';

/** How long a worker holds an owed notice before another may take it (a worker killed mid-way). */
const LEASE_MS = 30_000;
/** Owed notices a pass takes. */
const BATCH = 20;
/**
 * Owed notices a pass serves at once, each in its own transaction. NOTE: under ingestion load each
 * statement waits its turn for the CPU, and a notice (a dozen statements) took 1.5–2.5 s: one at a
 * time, crashes a second and a half apart queued behind one another without end.
 */
const CONCURRENCY = 4;
/** A failed attempt is tried again after this long. */
const RETRY_MS = 15_000;

const londonTime = (at: Date): string =>
  at.toLocaleString('en-GB', { timeZone: 'Europe/London', dateStyle: 'long', timeStyle: 'short' });

async function crashFileOf(trx: Executor, crash: CrashRecord, now: Date): Promise<CrashFile> {
  const positions = await crashTrace(trx, crash, {
    ...traceWindow(crash.occurredAt),
    limit: TRACE_MAX_POSITIONS,
  });
  return {
    crash_reference: crash.id,
    device_id: crash.deviceId,
    source: crash.source,
    peak_acceleration_g: crash.peakAccelerationG,
    delta_v_kmh: crash.deltaVKmh,
    airbag_deployed: crash.airbagDeployed,
    complete: now.getTime() >= traceFinalAt(crash.occurredAt).getTime(),
    positions: positions.map((p) => ({
      time: Math.floor(p.time.getTime() / 1000),
      lat: p.lat,
      lon: p.lon,
      speed_kmh: p.speedKmh,
    })),
  };
}

/** The draft claim of a crash, with its email, in `trx`; false when another worker made it first. */
async function openDraft(
  deps: ClaimServiceDeps,
  trx: Executor,
  crash: CrashRecord,
  now: Date,
): Promise<boolean> {
  const tenant = { companyId: crash.companyId, environment: crash.environment };
  const version = versionInForce(await listVersions(trx, crash.policyId), crash.occurredAt);
  const place = await deps.geocoder.lookup(crash.lat, crash.lon);
  const hours = (await findSettings(trx, tenant))?.response_hours ?? DEFAULT_RESPONSE_HOURS;
  const due = respondBy(now, hours);
  const claim = await insertClaim(trx, {
    policy_id: crash.policyId,
    company_id: crash.companyId,
    environment: crash.environment,
    state: 'draft',
    source: 'crash',
    crash_event_id: crash.id,
    policy_version_id: version?.id ?? null,
    occurred_at: crash.occurredAt,
    lat: crash.lat,
    lon: crash.lon,
    place_name: place.name,
    postcode: place.postcode,
    speed_kmh: String(crash.speedKmh),
    crash_file: await crashFileOf(trx, crash, now),
    cover: version === undefined ? null : coverSummary(version, crash.occurredAt),
    description: null,
    other_parties: null,
    injuries: null,
    other_vehicles: null,
    police_attended: null,
    handler_staff_id: null,
    respond_by: due,
    referred_at: null,
    legal_hold_reason: null,
    legal_hold_at: null,
    erased_at: null,
    opened_at: null,
    closed_at: null,
    at_fault: null,
    settled_at: null,
    ended_at: null,
    report_reference: null,
    report_digest: null,
    created_at: now,
    updated_at: now,
  });
  if (claim === undefined) return false;
  await recordEvent(
    trx,
    tenant,
    'claim.opened',
    claimEventData(claim, crash.policyReference, 'first_notice'),
    now,
  );
  const userId = await findPolicyholderId(trx, crash.policyId);
  const contact = userId === undefined ? undefined : await findPolicyholderContact(trx, userId);
  if (userId !== undefined && contact !== undefined)
    await deps.notifications.queueEmails(trx, [
      {
        scope: tenant,
        template: 'claim-crash-detected',
        to: contact.email,
        userId,
        email: claimCrashDetectedEmail({
          firstNames: contact.firstNames,
          policyReference: crash.policyReference,
          claimReference: claim.id,
          occurredAt: londonTime(crash.occurredAt),
          place:
            place.name === null ? null : [place.name, place.postcode].filter((p) => p !== null).join(', '),
          respondBy: londonTime(due),
        }),
      },
    ]);
  return true;
}

/**
 * One owed notice: the draft opened (or its crash file brought up to date), then the notice done once
 * the trace is final, else put off until it is.
 */
export async function serveOwed(
  deps: ClaimServiceDeps,
  owed: { crashId: string; policyId: string },
  now: Date,
) {
  await inTransaction(deps.db, async (trx) => {
    const crash = await findCrash(trx, owed.crashId);
    if (crash === undefined) {
      await deleteOwed(trx, owed.crashId);
      return;
    }
    const existing = await findClaimOfCrash(trx, crash.id, crash.policyId);
    if (existing === undefined) await openDraft(deps, trx, crash, now);
    else if (existing.erased_at === null)
      await updateClaim(
        trx,
        { id: existing.id, policyId: existing.policy_id },
        {
          crash_file: await crashFileOf(trx, crash, now),
        },
      );
    const finalAt = traceFinalAt(crash.occurredAt);
    if (now.getTime() >= finalAt.getTime()) await deleteOwed(trx, owed.crashId);
    else await postponeOwed(trx, owed.crashId, finalAt, null);
  });
}

/**
 * One pass over the notices owed and due: up to CONCURRENCY at once, each in its own transaction; a
 * failure is retried later.
 */
export async function serveOwedNotices(
  deps: ClaimServiceDeps,
  now: Date,
): Promise<{ served: number; failed: number }> {
  const owed = await leaseOwed(deps.db, now, LEASE_MS, BATCH);
  let failed = 0;
  await forEachConcurrent(owed, CONCURRENCY, async (o) => {
    try {
      await serveOwed(deps, o, now);
    } catch (error) {
      failed++;
      deps.logger?.error({ err: error, crash: o.crashId }, 'first notice of loss failed; trying again');
      await postponeOwed(deps.db, o.crashId, new Date(now.getTime() + RETRY_MS), String(error));
    }
  });
  return { served: owed.length - failed, failed };
}
