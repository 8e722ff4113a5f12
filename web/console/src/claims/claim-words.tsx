import type { Claim, ClaimExposure, ClaimState, Tenant } from '../api-types.ts';
import { followLink, hrefOf, type Route } from '../router.ts';

/*
 * A claim's states, exposures and ages in staff's words: one place, so the queue, the claim page and
 * the policy page read the same.
 */

/** Each state's name as a tag. */
export const STATE_NAMES: Readonly<Record<ClaimState, string>> = {
  draft: 'new first notice',
  open: 'open',
  reopened: 'reopened',
  settled: 'settled',
  closed: 'closed',
  rejected: 'rejected',
  withdrawn: 'withdrawn',
};

/** The button that moves a claim to a state (the API lists the states allowed next). */
export const TRANSITION_LABELS: Readonly<Record<ClaimState, string>> = {
  draft: 'Back to draft',
  open: 'Open the claim',
  reopened: 'Reopen',
  settled: 'Mark settled',
  closed: 'Close',
  rejected: 'Reject',
  withdrawn: 'Withdraw',
};

export const EXPOSURE_NAMES: Readonly<Record<ClaimExposure['kind'], string>> = {
  own_vehicle: 'Own vehicle',
  other_vehicle: 'Other vehicle',
  injury: 'Injury',
  windscreen: 'Windscreen',
  theft: 'Theft',
};

/** A claim's state as a coloured tag. */
export function ClaimStateTag({ state }: { readonly state: ClaimState }) {
  return <span className={`status claim-${state}`}>{STATE_NAMES[state]}</span>;
}

const part = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The time since an instant in words, to the two largest units: "45 seconds", "12 minutes",
 * "3 hours 5 minutes", "2 days 4 hours". A time ahead of `nowMs` (a clock a little fast) reads "just now".
 */
export function formatSince(atIso: string, nowMs: number): string {
  const seconds = Math.floor((nowMs - Date.parse(atIso)) / 1000);
  if (seconds < 5) return 'just now';
  if (seconds < 60) return part(seconds, 'second');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return part(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24)
    return minutes % 60 === 0
      ? part(hours, 'hour')
      : `${part(hours, 'hour')} ${part(minutes % 60, 'minute')}`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? part(days, 'day') : `${part(days, 'day')} ${part(hours % 24, 'hour')}`;
}

/** A yes/no answer of the policyholder's, or that it was not given. */
export const yesNo = (answer: boolean | null): string =>
  answer === null ? 'Not answered' : answer ? 'Yes' : 'No';

/** A link to a route, routed in the page (a new tab works too). */
export function RouteLink({ route, children }: { readonly route: Route; readonly children: string }) {
  return (
    <a
      href={hrefOf(route)}
      onClick={(event) => {
        followLink(event, route);
      }}
    >
      {children}
    </a>
  );
}

/** The claim page of a claim of the tenant's. */
export const claimRoute = (tenant: Tenant, claimReference: string): Route => ({
  page: 'claim',
  companyReference: tenant.company.company_reference,
  environment: tenant.environment,
  claimReference,
});

/** A claim's reference as staff read it out: its first eight characters (the link carries the whole). */
export const shortRef = (claim: Pick<Claim, 'claim_reference'>): string =>
  claim.claim_reference.slice(0, 8).toUpperCase();
