/** A claim as the API shows it, from its row and what hangs off it. */
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { findPolicyReference } from '../policies/index.ts';
import {
  listExposures,
  listNotes,
  listPayments,
  listPhotos,
  type ClaimRow,
  type CrashFile,
} from './claim-repository.ts';
import type { ClaimView } from './claim-schemas.ts';
import { CLAIM_TRANSITIONS, type CoverSummary } from './rules/index.ts';

const isoOrNull = (at: Date | null): string | null => at?.toISOString() ?? null;
const parsed = <T>(value: T | string | null): T | null =>
  value === null ? null : typeof value === 'string' ? (JSON.parse(value) as T) : value;

/** The claim's view; `withNotes` for clients and staff (a policyholder never sees staff's notes). */
export async function claimView(db: Executor, row: ClaimRow, withNotes: boolean): Promise<ClaimView> {
  const ref = { id: row.id, policyId: row.policy_id };
  const [exposures, payments, photos, notes, policyReference] = await Promise.all([
    listExposures(db, ref),
    listPayments(db, ref),
    listPhotos(db, ref),
    withNotes ? listNotes(db, ref) : Promise.resolve([]),
    findPolicyReference(db, row.policy_id),
  ]);
  return {
    claim_reference: row.id,
    policy_reference: policyReference ?? '',
    state: row.state,
    next_states: [...CLAIM_TRANSITIONS[row.state]],
    source: row.source,
    occurred_at: row.occurred_at.toISOString(),
    lat: row.lat,
    lon: row.lon,
    place_name: row.place_name,
    postcode: row.postcode,
    speed_kmh: row.speed_kmh === null ? null : Number(row.speed_kmh),
    crash_file: parsed<CrashFile>(row.crash_file) as ClaimView['crash_file'],
    cover: parsed<CoverSummary>(row.cover),
    description: row.description,
    other_parties: row.other_parties,
    injuries: row.injuries,
    other_vehicles: row.other_vehicles,
    police_attended: row.police_attended,
    handler_staff_id: row.handler_staff_id,
    respond_by: isoOrNull(row.respond_by),
    referred_at: isoOrNull(row.referred_at),
    legal_hold:
      row.legal_hold_reason === null || row.legal_hold_at === null
        ? null
        : { reason: row.legal_hold_reason, since: row.legal_hold_at.toISOString() },
    at_fault: row.at_fault,
    settled_at: isoOrNull(row.settled_at),
    exposures: exposures.map((e) => ({
      exposure_id: e.id,
      kind: e.kind,
      reserve: fromPence(e.reserve_pence),
      paid: fromPence(e.paid_pence),
      outstanding: e.settled_at === null ? fromPence(e.reserve_pence - e.paid_pence) : 0,
      settled_at: isoOrNull(e.settled_at),
    })),
    payments: payments.map((p) => ({
      payment_id: p.id,
      exposure_id: p.exposure_id,
      amount: fromPence(p.amount_pence),
      final: p.final,
      payee: p.payee,
      paid_at: p.paid_at.toISOString(),
      payment_reference: p.payment_reference,
    })),
    photos: photos.map((p) => ({
      photo_id: p.id,
      content_type: p.content_type,
      size_bytes: p.size_bytes,
      sha256: p.sha256,
      uploaded_at: p.uploaded_at.toISOString(),
    })),
    ...(withNotes
      ? {
          notes: notes.map((n) => ({
            note_id: n.id,
            author: n.author,
            text: n.body,
            created_at: n.created_at.toISOString(),
          })),
        }
      : {}),
    opened_at: isoOrNull(row.opened_at),
    closed_at: isoOrNull(row.closed_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The data of a `claim.*` event: what a receiver needs to fetch the claim, and its state. */
export const claimEventData = (row: ClaimRow, policyReference: string, change: string) => ({
  claim_reference: row.id,
  policy_reference: policyReference,
  state: row.state,
  source: row.source,
  occurred_at: row.occurred_at.toISOString(),
  change,
});
