/** Claims under erasure and subject access: a live claim is kept under a legal hold; a finished one is pseudonymised. */
import type { Executor } from '../../schema.ts';
import { isLive, type ClaimState } from './rules/index.ts';

/** A claim kept by an erasure, with the reason recorded on it. */
export interface KeptClaim {
  readonly claimId: string;
  /** The crash that opened it, kept with it. */
  readonly crashId: string | null;
  readonly state: ClaimState;
  readonly reason: string;
}

/** NOTE: the legal basis for keeping a live claim's data (UK GDPR Art. 17(3)(e): establishment, exercise or defence of legal claims). */
export const LEGAL_HOLD_REASON =
  'Claim in progress: kept under UK GDPR Article 17(3)(e) (legal claims) until it is closed';

/**
 * A finished claim's personal data erased in `trx` (erasure, and the retention of ended claims): place,
 * trace, free text and photos gone, notes blanked; its money (exposures, payments, reserve movements)
 * kept as financial records are, and `erased_at` set.
 */
export async function erasePersonalData(
  trx: Executor,
  claim: { id: string; policy_id: string },
  now: Date,
): Promise<void> {
  await trx
    .updateTable('claims')
    .set({
      lat: null,
      lon: null,
      place_name: null,
      postcode: null,
      crash_file: null,
      description: null,
      other_parties: null,
      erased_at: now,
      updated_at: now,
    })
    .where('id', '=', claim.id)
    .where('policy_id', '=', claim.policy_id)
    .execute();
  await trx
    .deleteFrom('claim_photos')
    .where('claim_id', '=', claim.id)
    .where('policy_id', '=', claim.policy_id)
    .execute();
  await trx
    .updateTable('claim_notes')
    .set({ body: '[erased]' })
    .where('claim_id', '=', claim.id)
    .where('policy_id', '=', claim.policy_id)
    .execute();
}

/**
 * In the erasure's transaction: each live claim (draft, open, reopened) of the policies is kept whole under
 * a recorded legal hold; every other claim's personal data (place, trace, answers, free text, photos,
 * notes) is erased, its money (exposures, payments) kept as financial records are. The claims kept.
 */
export async function eraseClaims(
  trx: Executor,
  policyIds: readonly string[],
  now: Date,
): Promise<KeptClaim[]> {
  if (policyIds.length === 0) return [];
  const claims = await trx
    .selectFrom('claims')
    .select(['id', 'policy_id', 'state', 'crash_event_id'])
    .where('policy_id', 'in', policyIds)
    .forUpdate()
    .execute();
  // A notice still owed would open a claim from a crash the erasure deletes.
  await trx.deleteFrom('claim_crashes_owed').where('policy_id', 'in', policyIds).execute();
  const kept: KeptClaim[] = [];
  for (const claim of claims) {
    if (isLive(claim.state)) {
      await trx
        .updateTable('claims')
        .set({ legal_hold_reason: LEGAL_HOLD_REASON, legal_hold_at: now })
        .where('id', '=', claim.id)
        .where('policy_id', '=', claim.policy_id)
        .execute();
      kept.push({
        claimId: claim.id,
        crashId: claim.crash_event_id,
        state: claim.state,
        reason: LEGAL_HOLD_REASON,
      });
      continue;
    }
    await erasePersonalData(trx, claim, now);
  }
  return kept;
}

/**
 * The policies' claims for a subject access export, with exposures, payments, reserve movements, notes
 * and photos' metadata: no photo's bytes (up to 50 photos of 10 MiB a claim), which
 * `findClaimPhotoContent` reads one photo at a time.
 */
export async function listClaimsOfPolicies(trx: Executor, policyIds: readonly string[]) {
  if (policyIds.length === 0) return [];
  const claims = await trx
    .selectFrom('claims')
    .selectAll()
    .where('policy_id', 'in', policyIds)
    .orderBy('created_at')
    .execute();
  const ids = claims.map((c) => c.id);
  if (ids.length === 0) return [];
  const [exposures, payments, movements, notes, photos] = await Promise.all([
    trx
      .selectFrom('claim_exposures')
      .selectAll()
      .where('policy_id', 'in', policyIds)
      .where('claim_id', 'in', ids)
      .execute(),
    trx
      .selectFrom('claim_payments')
      .selectAll()
      .where('policy_id', 'in', policyIds)
      .where('claim_id', 'in', ids)
      .execute(),
    trx
      .selectFrom('claim_reserve_movements')
      .selectAll()
      .where('policy_id', 'in', policyIds)
      .where('claim_id', 'in', ids)
      .orderBy('moved_at')
      .execute(),
    trx
      .selectFrom('claim_notes')
      .selectAll()
      .where('policy_id', 'in', policyIds)
      .where('claim_id', 'in', ids)
      .execute(),
    trx
      .selectFrom('claim_photos')
      .select(['id', 'claim_id', 'content_type', 'size_bytes', 'sha256', 'uploaded_at'])
      .where('policy_id', 'in', policyIds)
      .where('claim_id', 'in', ids)
      .execute(),
  ]);
  return claims.map((c) => ({
    ...c,
    exposures: exposures.filter((e) => e.claim_id === c.id),
    payments: payments.filter((p) => p.claim_id === c.id),
    reserve_movements: movements.filter((m) => m.claim_id === c.id),
    notes: notes.filter((n) => n.claim_id === c.id),
    photos: photos.filter((p) => p.claim_id === c.id),
  }));
}

/** One claim photo's bytes, read on its own; undefined once it is gone (erased since it was listed). */
export async function findClaimPhotoContent(
  db: Executor,
  photo: { id: string; policyId: string },
): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('claim_photos')
    .select('content')
    .where('policy_id', '=', photo.policyId)
    .where('id', '=', photo.id)
    .executeTakeFirst();
  return row?.content;
}
