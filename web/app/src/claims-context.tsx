import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { unwrap, type components, type Session } from '../../../sdk/src/index.ts';
import { formatDate, formatDateTime, formatTime } from '../../shared/format.ts';
import { humanError } from './errors.ts';
import { usePolicy } from './policy-context.tsx';
import { PageLink } from './page-link.tsx';
import type { Route } from './router.ts';

export type Claim = components['schemas']['Claim'];

/** The policy's claims, loaded once for every page (the banner needs them wherever the policyholder is). */
export interface ClaimsState {
  readonly claims: readonly Claim[] | undefined;
  /** A sentence when they could not be loaded. */
  readonly error: string | undefined;
  /** Loads them again (after a confirmation, a cancellation, a report or a photo). */
  readonly reload: () => void;
}

const ClaimsContext = createContext<ClaimsState>({ claims: undefined, error: undefined, reload: () => {} });

/**
 * Loads the policy's claims with one request once the policy is known (GET …/claims: drafts first, then
 * newest first), again on `reload` and when the page is shown again: the banner reads the first one, the
 * claims pages all of them.
 */
export function ClaimsProvider({ session, children }: { session: Session; children: ReactNode }) {
  const reference = usePolicy().policy?.policy_reference;
  const [claims, setClaims] = useState<readonly Claim[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    if (reference === undefined) return;
    let live = true;
    unwrap(
      session.client.GET('/policys/{policy_reference}/claims', {
        params: { path: { policy_reference: reference } },
      }),
    ).then(
      (list) => {
        if (!live) return;
        setClaims(list.claims);
        setError(undefined);
      },
      (caught: unknown) => {
        if (live) setError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, reference, generation]);
  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
  }, []);
  // NOTE: a crash may come while the app sits open in a background tab: coming back to it asks again.
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible') reload();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [reload]);
  return <ClaimsContext.Provider value={{ claims, error, reload }}>{children}</ClaimsContext.Provider>;
}

export const useClaims = (): ClaimsState => useContext(ClaimsContext);

/** The draft the policyholder has yet to answer (the newest first notice), if any. */
export const draftOf = (claims: readonly Claim[] | undefined): Claim | undefined =>
  claims?.find((claim) => claim.state === 'draft');

/** Where a claim happened, in words: the geocoder's place, else its postcode, else nothing. */
export const placeOf = (claim: Claim): string | undefined => claim.place_name ?? claim.postcode ?? undefined;

/** "at 14:32" today (in London), "on 28 November 2026 at 14:32" before. */
const whenSaid = (at: string): string =>
  formatDate(at) === formatDate(new Date()) ? `at ${formatTime(at)}` : `on ${formatDateTime(at)}`;

/**
 * On every signed-in page while a crash's draft waits for an answer: what we think happened and a link to
 * the screen that answers it. Not shown on that screen itself.
 */
export function CrashBanner({ route }: { route: Route }) {
  const draft = draftOf(useClaims().claims);
  if (draft === undefined || route === 'claim-answer') return null;
  const place = placeOf(draft);
  return (
    <div className="crash-banner" data-testid="crash-banner">
      <div className="message warning" role="region" aria-label="Possible accident">
        <p>
          <strong>
            We think you may have had an accident {whenSaid(draft.occurred_at)}
            {place === undefined ? '' : ` near ${place}`} — are you OK?
          </strong>
        </p>
        <p>
          {draft.respond_by === null
            ? 'Please tell us what happened.'
            : `Please tell us what happened by ${formatDateTime(draft.respond_by)}.`}{' '}
          <PageLink route="claim-answer">Tell us what happened</PageLink>
        </p>
      </div>
    </div>
  );
}
