/** A policy's claims as its policyholder (or a client for them) sees and answers them; reports and photos. */
import { createHash } from 'node:crypto';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy, listVersions, type PolicyRecord } from '../policies/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import { changeClaim, moveClaim } from './claim-life-service.ts';
import {
  countReportedInProgress,
  findClaim,
  findPhoto,
  findReported,
  insertClaim,
  listClaims,
  lockReports,
  type ClaimRow,
} from './claim-repository.ts';
import type { ClaimView, ConfirmClaim, ReportClaim } from './claim-schemas.ts';
import { claimEventData, claimView } from './claim-views.ts';
import {
  checkPhoto,
  coverSummary,
  MAX_REPORTED_IN_PROGRESS,
  mayReportClaim,
  versionInForce,
} from './rules/index.ts';

/** Photos a claim may hold. */
const MAX_PHOTOS_PER_CLAIM = 50;

const invalid = (path: string, message: string) =>
  new AppError('VALIDATION_FAILED', `The request is invalid: ${path} ${message}`, {
    errors: [{ path, message }],
  });

/** The report as sent, every field in a fixed order, hashed: equal for the same report sent again. */
function reportDigest(input: ReportClaim): string {
  const fields = [
    input.occurred_at,
    input.lat,
    input.lon,
    input.description,
    input.other_parties ?? null,
    input.injuries,
    input.other_vehicles,
    input.police_attended,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/**
 * The claim already reported under the report's `report_reference`, when this is that report sent again;
 * 409 when the reference names another report. Called under `lockReports`.
 */
async function reportedBefore(
  trx: Executor,
  tenant: Tenant,
  policy: PolicyRecord,
  input: ReportClaim,
  digest: string,
): Promise<ClaimRow | undefined> {
  if (input.report_reference === undefined) return undefined;
  const stored = await findReported(trx, policy.id, input.report_reference);
  if (stored === undefined) return undefined;
  if (stored.report_digest !== digest)
    throw new AppError(
      'CONFLICT',
      `report_reference ${input.report_reference} names another report on this policy: send a new reference for a new report`,
    );
  return findClaim(trx, tenant, stored.id);
}

/** See ClaimHolderService.report. */
async function reportClaim(
  deps: ClaimServiceDeps,
  tenant: Tenant,
  policy: PolicyRecord,
  input: ReportClaim,
  byPolicyholder: boolean,
): Promise<{ claim: ClaimView; replayed: boolean }> {
  const now = deps.clock.now();
  const occurredAt = new Date(input.occurred_at * 1000);
  if (occurredAt.getTime() > now.getTime()) throw invalid('/body/occurred_at', 'is in the future');
  const place = await deps.geocoder.lookup(input.lat, input.lon);
  const digest = reportDigest(input);
  return inTransaction(deps.db, async (trx) => {
    await lockReports(trx, policy.id);
    const before = await reportedBefore(trx, tenant, policy, input, digest);
    if (before !== undefined) return { claim: await claimView(trx, before, false), replayed: true };
    const version = versionInForce(await listVersions(trx, policy.id), occurredAt);
    if (version === undefined) throw invalid('/body/occurred_at', 'is before the policy began');
    if (byPolicyholder && !mayReportClaim(await countReportedInProgress(trx, policy.id)))
      throw new AppError(
        'CONFLICT',
        `A policy has at most ${String(MAX_REPORTED_IN_PROGRESS)} reported claims in progress; another is reported once one has ended`,
      );
    const claim = await insertClaim(trx, {
      policy_id: policy.id,
      company_id: tenant.companyId,
      environment: tenant.environment,
      state: 'open',
      source: 'reported',
      crash_event_id: null,
      policy_version_id: version.id,
      occurred_at: occurredAt,
      lat: input.lat,
      lon: input.lon,
      place_name: place.name,
      postcode: place.postcode,
      speed_kmh: null,
      crash_file: null,
      cover: coverSummary(version, occurredAt),
      description: input.description,
      other_parties: input.other_parties ?? null,
      injuries: input.injuries,
      other_vehicles: input.other_vehicles,
      police_attended: input.police_attended,
      handler_staff_id: null,
      respond_by: null,
      referred_at: null,
      legal_hold_reason: null,
      legal_hold_at: null,
      erased_at: null,
      opened_at: now,
      closed_at: null,
      at_fault: null,
      settled_at: null,
      ended_at: null,
      report_reference: input.report_reference ?? null,
      report_digest: input.report_reference === undefined ? null : digest,
      created_at: now,
      updated_at: now,
    });
    if (claim === undefined) throw new Error('a reported claim has no crash to conflict on');
    await recordEvent(
      trx,
      tenant,
      'claim.opened',
      claimEventData(claim, policy.policyReference, 'reported'),
      now,
    );
    return { claim: await claimView(trx, claim, false), replayed: false };
  });
}

export function createClaimHolderService(deps: ClaimServiceDeps) {
  const { db } = deps;

  const policyOf = async (tenant: Tenant, reference: string): Promise<PolicyRecord> => {
    const policy = await findPolicy(db, tenant, reference);
    if (policy === undefined) throw notFound('policy');
    return policy;
  };

  const claimOfPolicy = async (tenant: Tenant, reference: string, claimId: string) => {
    const policy = await policyOf(tenant, reference);
    const claim = await findClaim(db, tenant, claimId);
    if (claim === undefined || claim.policy_id !== policy.id) throw notFound('claim');
    return claim;
  };

  return {
    /** The policy's claims, newest first (staff's notes left out). */
    async listOfPolicy(tenant: Tenant, reference: string) {
      const policy = await policyOf(tenant, reference);
      const rows = await listClaims(db, tenant, { policyId: policy.id, limit: 500 });
      return { claims: await Promise.all(rows.map((r) => claimView(db, r, false))) };
    },

    /** One claim of the policy (404 when it is another policy's, company's or policyholder's). */
    async getOfPolicy(tenant: Tenant, reference: string, claimId: string): Promise<ClaimView> {
      return claimView(db, await claimOfPolicy(tenant, reference, claimId), false);
    },

    /** "I've had an accident": a draft becomes open with the policyholder's answers (409 unless a draft). */
    async confirm(
      tenant: Tenant,
      reference: string,
      claimId: string,
      answers: ConfirmClaim,
    ): Promise<ClaimView> {
      const policy = await policyOf(tenant, reference);
      return changeClaim(
        deps,
        tenant,
        claimId,
        'confirmed',
        async (trx, claim, now) => {
          if (claim.state !== 'draft')
            throw new AppError('CONFLICT', `Only a draft is confirmed; this claim is ${claim.state}`);
          return moveClaim(trx, claim, 'open', now, {
            injuries: answers.injuries,
            other_vehicles: answers.other_vehicles,
            police_attended: answers.police_attended,
            description: answers.description ?? null,
            other_parties: answers.other_parties ?? null,
          });
        },
        { withNotes: false, policyId: policy.id },
      );
    },

    /** "False alarm": a draft is withdrawn (409 unless a draft). */
    async cancel(tenant: Tenant, reference: string, claimId: string): Promise<ClaimView> {
      const policy = await policyOf(tenant, reference);
      return changeClaim(
        deps,
        tenant,
        claimId,
        'false_alarm',
        async (trx, claim, now) => {
          if (claim.state !== 'draft')
            throw new AppError('CONFLICT', `Only a draft is cancelled; this claim is ${claim.state}`);
          return moveClaim(trx, claim, 'withdrawn', now);
        },
        { withNotes: false, policyId: policy.id },
      );
    },

    /**
     * A claim reported with no crash: when, where, what happened, other parties; open at once, with the
     * policy version in force then. 422 for a time in the future or before the policy began. Sent again
     * under its `report_reference`, the claim it opened, `replayed`.
     */
    report: async (
      tenant: Tenant,
      reference: string,
      input: ReportClaim,
      by: 'policyholder' | 'client',
    ): Promise<{ claim: ClaimView; replayed: boolean }> =>
      reportClaim(deps, tenant, await policyOf(tenant, reference), input, by === 'policyholder'),

    /**
     * A photo stored with the claim: at most 10 MiB, and a JPEG, PNG, HEIC or WebP judged by its bytes
     * (422 otherwise); not on a claim that is closed, rejected or withdrawn (409).
     */
    async addPhoto(tenant: Tenant, reference: string, claimId: string, bytes: Buffer) {
      const checked = checkPhoto(bytes);
      if (!checked.ok) throw invalid('/body', checked.message);
      const policy = await policyOf(tenant, reference);
      return changeClaim(
        deps,
        tenant,
        claimId,
        'photo',
        async (trx, claim, now) => {
          if (claim.state === 'closed' || claim.state === 'rejected' || claim.state === 'withdrawn')
            throw new AppError('CONFLICT', `Photos are added to a live claim; this one is ${claim.state}`);
          const count = await trx
            .selectFrom('claim_photos')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('policy_id', '=', claim.policy_id)
            .where('claim_id', '=', claim.id)
            .executeTakeFirstOrThrow();
          if (count.n >= MAX_PHOTOS_PER_CLAIM)
            throw new AppError('CONFLICT', `A claim holds at most ${String(MAX_PHOTOS_PER_CLAIM)} photos`);
          await trx
            .insertInto('claim_photos')
            .values({
              policy_id: claim.policy_id,
              claim_id: claim.id,
              company_id: claim.company_id,
              environment: claim.environment,
              content_type: checked.contentType,
              size_bytes: bytes.length,
              sha256: createHash('sha256').update(bytes).digest('hex'),
              content: bytes,
              uploaded_at: now,
            })
            .execute();
          return undefined;
        },
        { withNotes: false, policyId: policy.id },
      );
    },

    /** A photo's bytes and type (404 when not the claim's). */
    async photo(tenant: Tenant, reference: string, claimId: string, photoId: string) {
      const claim = await claimOfPolicy(tenant, reference, claimId);
      const photo = await findPhoto(db, { id: claim.id, policyId: claim.policy_id }, photoId);
      if (photo === undefined) throw notFound('photo');
      return { contentType: photo.content_type, content: Buffer.from(photo.content) };
    },
  };
}
