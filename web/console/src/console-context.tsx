import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { consoleError, type ConsoleApi } from './api.ts';
import type { Company, Environment, Role, StaffSession, Tenant } from './api-types.ts';
import type { ConsoleConfig } from './config.ts';

/** What every signed-in page is given. */
export interface ConsoleState {
  readonly api: ConsoleApi;
  readonly config: ConsoleConfig;
  readonly session: StaffSession;
  /** Every company (the picker's choices); empty until loaded. */
  readonly companies: readonly Company[];
  /** False until the companies have been listed (and while they cannot be). */
  readonly companiesLoaded: boolean;
  /** The company and environment the per-company pages show; undefined before there is a company. */
  readonly tenant: Tenant | undefined;
  readonly setTenant: (companyReference: string, environment: Environment) => void;
  readonly reloadCompanies: () => void;
}

export const ConsoleContext = createContext<ConsoleState | undefined>(undefined);

export function useConsole(): ConsoleState {
  const state = useContext(ConsoleContext);
  if (state === undefined) throw new Error('useConsole outside a signed-in page');
  return state;
}

// Claims handlers act on claims only: on the console's other pages they read, as viewers.
const RANK: Readonly<Record<Role, number>> = { viewer: 0, claims: 0, operations: 1, admin: 2 };

/** Whether a role may do what `least` may: viewers read, operations also act on policies, admins manage. */
export const allows = (role: Role, least: Role): boolean => RANK[role] >= RANK[least];

/** The signed-in role may act on policies (void, credit, retry, cancel, resend). */
export const useCanAct = (): boolean => allows(useConsole().session.staff.role, 'operations');
export const useIsAdmin = (): boolean => allows(useConsole().session.staff.role, 'admin');

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Loads with `load` whenever `key` changes (or on `reload`), dropping answers that arrive after a
 * newer request was made.
 */
export function useLoad<T>(load: (() => Promise<T>) | undefined, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(load !== undefined);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const run = latest.current;
    if (run === undefined) {
      setLoading(false);
      return;
    }
    let live = true;
    setLoading(true);
    run().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (caught: unknown) => {
        if (!live) return;
        setError(consoleError(caught));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [key, generation]);
  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
  }, []);
  return { data, error, loading, reload };
}
