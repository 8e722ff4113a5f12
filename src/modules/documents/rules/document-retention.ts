import type { DocumentKind } from './documents-owed.ts';

/**
 * Years a term's certificate and schedule are kept after the term ends, even when the policyholder's
 * data is erased: the Limitation Act 1980 s.5 lets a claim in contract be brought for six years, and
 * the certificate (the evidence of cover the Road Traffic Act 1988 requires) and the schedule (the
 * contract's terms) are what either side would need; the FCA's record-keeping rules (SYSC 9.1) ask
 * for such records to be kept too.
 */
export const KEEP_AFTER_TERM_END_YEARS = 6;

export const KEPT_REASON =
  'Limitation Act 1980 s.5: six years after the term ends, the certificate of motor insurance and the policy schedule are kept as evidence of the contract and of cover (FCA SYSC 9.1 record keeping).';

/** Kinds kept on erasure while their term's limitation period runs. */
const KEPT_KINDS: ReadonlySet<DocumentKind> = new Set(['certificate', 'schedule']);

export type RetentionDecision =
  { readonly keep: false } | { readonly keep: true; readonly until: Date; readonly reason: string };

/** The end of the limitation period: `KEEP_AFTER_TERM_END_YEARS` calendar years after the term's end (UTC). */
export function keepUntil(termEndAt: Date): Date {
  const until = new Date(termEndAt.getTime());
  until.setUTCFullYear(until.getUTCFullYear() + KEEP_AFTER_TERM_END_YEARS);
  return until;
}

/**
 * Whether erasure keeps a document at `now`: certificates and schedules whose term ended less than six
 * years ago (or has not ended: a forced erasure of a running policy); every other kind, and those past
 * the period, go.
 */
export function retentionOnErasure(
  document: { readonly kind: DocumentKind; readonly termEndAt: Date },
  now: Date,
): RetentionDecision {
  if (!KEPT_KINDS.has(document.kind)) return { keep: false };
  const until = keepUntil(document.termEndAt);
  return until.getTime() > now.getTime() ? { keep: true, until, reason: KEPT_REASON } : { keep: false };
}
