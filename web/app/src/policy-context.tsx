import { createContext, useCallback, useContext, useLayoutEffect, useState, type ReactNode } from 'react';
import { unwrap, type PolicyDetails, type Session } from '../../../sdk/src/index.ts';
import { humanError } from './errors.ts';

/** The signed-in policyholder's current policy, loaded once for every page (each page loads its own lists). */
export interface PolicyState {
  readonly policy: PolicyDetails | undefined;
  /** A sentence when it could not be loaded. */
  readonly error: string | undefined;
  /** Loads it again (after a change the page made, e.g. a new card or a budget). */
  readonly reload: () => void;
}

const PolicyContext = createContext<PolicyState>({ policy: undefined, error: undefined, reload: () => {} });

export function PolicyProvider({ session, children }: { session: Session; children: ReactNode }) {
  const [policy, setPolicy] = useState<PolicyDetails | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  // A layout effect, run before the first paint rather than after it (Preact runs useEffect a frame
  // later): the policy is usually in already (index.html's start script asked for it), so it renders
  // as soon as it is read instead of waiting for a frame.
  useLayoutEffect(() => {
    let live = true;
    unwrap(session.client.GET('/policys/details')).then(
      (details) => {
        if (!live) return;
        setPolicy(details);
        setError(undefined);
      },
      (caught: unknown) => {
        if (live) setError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, generation]);
  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
  }, []);
  return <PolicyContext.Provider value={{ policy, error, reload }}>{children}</PolicyContext.Provider>;
}

export const usePolicy = (): PolicyState => useContext(PolicyContext);
