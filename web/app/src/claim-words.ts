import { formatDateTime } from '../../shared/format.ts';
import type { Claim } from './claims-context.tsx';

type State = Claim['state'];

/** Each state of a claim as a policyholder would say it. */
export const CLAIM_STATE_LABELS: Readonly<Record<State, string>> = {
  draft: 'Waiting for your answer',
  open: 'Open',
  settled: 'Settled',
  closed: 'Closed',
  rejected: 'Not accepted',
  withdrawn: 'Withdrawn',
  reopened: 'Reopened',
};

/** The status badge's class: the same colours as a policy's status (active, cancelled, …). */
export const CLAIM_STATE_CLASS: Readonly<Record<State, string>> = {
  draft: 'status-draft',
  open: 'status-active',
  settled: 'status-active',
  closed: 'status-closed',
  rejected: 'status-cancelled',
  withdrawn: 'status-closed',
  reopened: 'status-active',
};

/**
 * What happens next in each state, in plain words: the states and who moves a claim on are the state table
 * of docs/api.md ("The claim's states"); a draft unanswered by `respond_by` goes to the claims team.
 */
export function nextStep(claim: Claim): string {
  switch (claim.state) {
    case 'draft':
      return claim.referred_at === null
        ? `Tell us whether you had an accident${claim.respond_by === null ? '' : ` by ${formatDateTime(claim.respond_by)}`}. If we do not hear from you by then, our claims team will contact you.`
        : 'We did not hear from you in time, so our claims team will contact you. You can still tell us what happened.';
    case 'open':
      return 'Our claims team is looking at your claim. A handler will contact you and tell you what we need from you, such as repair estimates.';
    case 'reopened':
      return 'Your claim has been reopened: a handler will contact you about what is still to be done.';
    case 'settled':
      return 'Every payment on your claim has been made. We close it once nothing more is owed; if something comes up, tell us and we can reopen it.';
    case 'closed':
      return 'Your claim is closed: nothing more will happen. If something new comes to light, contact us and we can reopen it.';
    case 'rejected':
      return 'We will not pay this claim, and we will explain why. If you disagree, contact us: we can look at it again, and if you are still unhappy you can take your complaint to the Financial Ombudsman Service.';
    case 'withdrawn':
      return 'This claim has been withdrawn: nothing more will happen. If that is wrong, contact us and we can reopen it.';
  }
}

/** The photo's size in words (the documents page's style). */
export const sizeOf = (bytes: number): string =>
  bytes < 1024
    ? `${String(bytes)} bytes`
    : bytes < 1024 * 1024
      ? `${String(Math.ceil(bytes / 1024))} KB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
