import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import { unwrap, type PolicyDetails, type Session } from '../../../sdk/src/index.ts';
import { loadFormattingDataWhenIdle } from '../../shared/format.ts';
import type { AppConfig } from './config.ts';
import { takeEarlyPolicy } from './early-request.ts';
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

export function PolicyProvider({
  session,
  config,
  children,
}: {
  session: Session;
  config: AppConfig;
  children: ReactNode;
}) {
  // The policy index.html's start script asked for, where it has come: the first render shows it.
  const [policy, setPolicy] = useState(() => takeEarlyPolicy(config) as PolicyDetails | undefined);
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  const loadedEarly = useRef(policy !== undefined);
  // A layout effect, run before the first paint rather than after it (Preact runs useEffect a frame
  // later): where the policy has not come by the first render, it is usually on its way (index.html's
  // start script asked for it), so it renders as soon as it is read instead of waiting for a frame.
  useLayoutEffect(() => {
    if (loadedEarly.current) {
      loadedEarly.current = false;
      return;
    }
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
  // Once the policy is shown, ICU's data loads for the pages whose charts and months use Intl; the
  // policy page's own formats do without it (shared/format.ts).
  const shown = policy !== undefined;
  useEffect(() => (shown ? loadFormattingDataWhenIdle() : undefined), [shown]);
  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
  }, []);
  return <PolicyContext.Provider value={{ policy, error, reload }}>{children}</PolicyContext.Provider>;
}

export const usePolicy = (): PolicyState => useContext(PolicyContext);
