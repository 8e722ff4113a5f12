/**
 * The claim's state table: the one list of allowed changes. The database's trigger on `claims`
 * (migration 0049) holds the same rows and refuses any other change; the service checks
 * here first, to answer 409 naming the states allowed next.
 */

export type ClaimState = 'draft' | 'open' | 'settled' | 'closed' | 'rejected' | 'withdrawn' | 'reopened';
export const CLAIM_STATES: readonly ClaimState[] = [
  'draft',
  'open',
  'settled',
  'closed',
  'rejected',
  'withdrawn',
  'reopened',
];

export const CLAIM_TRANSITIONS: Readonly<Record<ClaimState, readonly ClaimState[]>> = {
  draft: ['open', 'withdrawn', 'rejected'],
  open: ['settled', 'rejected', 'withdrawn'],
  reopened: ['settled', 'rejected', 'withdrawn'],
  settled: ['closed', 'reopened'],
  closed: ['reopened'],
  rejected: ['reopened'],
  withdrawn: ['reopened'],
};

/** Whether the table allows `from` → `to`. */
export const mayTransition = (from: ClaimState, to: ClaimState): boolean =>
  CLAIM_TRANSITIONS[from].includes(to);

/** States in which the claim is live: payments may be made and erasure keeps it under a legal hold. */
export const isLive = (state: ClaimState): boolean =>
  state === 'draft' || state === 'open' || state === 'reopened';

/**
 * Claims reported on a policy (not opened by a crash) that may be in progress (not closed, rejected or
 * withdrawn) when its policyholder reports another. Each takes up to 50 photos of 10 MiB, so without a
 * bound one policyholder could store without end; the company's integration is not bounded.
 */
export const MAX_REPORTED_IN_PROGRESS = 10;

/** Whether a policy with `inProgress` reported claims in progress may have another reported. */
export const mayReportClaim = (inProgress: number): boolean => inProgress < MAX_REPORTED_IN_PROGRESS;

export type ExposureKind = 'own_vehicle' | 'other_vehicle' | 'injury' | 'windscreen' | 'theft';
export const EXPOSURE_KINDS: readonly ExposureKind[] = [
  'own_vehicle',
  'other_vehicle',
  'injury',
  'windscreen',
  'theft',
];

/** Events a change of state records: `claim.opened` when a claim becomes open, `claim.closed` when closed. */
export function eventOfTransition(to: ClaimState): 'claim.opened' | 'claim.closed' | 'claim.updated' {
  if (to === 'open') return 'claim.opened';
  if (to === 'closed') return 'claim.closed';
  return 'claim.updated';
}
