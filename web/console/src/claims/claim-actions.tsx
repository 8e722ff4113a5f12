import { createContext, useContext, type ReactNode } from 'react';
import type { Claim } from '../api-types.ts';
import { useConsole } from '../console-context.tsx';
import { Panel } from '../policy/panel.tsx';
import type { ClaimAction } from './claim-dialogs.tsx';
import { TRANSITION_LABELS } from './claim-words.tsx';

interface Actions {
  /** The signed-in role handles claims (`claims` or `admin`); others read, and see no buttons. */
  readonly canHandle: boolean;
  readonly open: (action: ClaimAction) => void;
}

const ActionsContext = createContext<Actions>({ canHandle: false, open: () => {} });

export function ClaimActions({ value, children }: { readonly value: Actions; readonly children: ReactNode }) {
  return <ActionsContext.Provider value={value}>{children}</ActionsContext.Provider>;
}

/**
 * Claims handlers and admins act on claims; viewers and operations staff read them (the server's role
 * table, `claims.*` actions, refuses them too).
 */
export const useCanHandleClaims = (): boolean => {
  const role = useConsole().session.staff.role;
  return role === 'claims' || role === 'admin';
};

/** An action's button, shown only to a role that may take it. */
export function ClaimActionButton(props: {
  readonly label: string;
  readonly action: ClaimAction;
  /** Read out after the label: which exposure it acts on. */
  readonly about?: string;
}) {
  const { canHandle, open } = useContext(ActionsContext);
  if (!canHandle) return null;
  return (
    <button
      type="button"
      className="secondary"
      onClick={() => {
        open(props.action);
      }}
    >
      {props.label}
      {props.about === undefined ? null : <span className="visually-hidden"> {props.about}</span>}
    </button>
  );
}

/** Exposures may be added while the claim is being handled (draft, open or reopened). */
const TAKES_EXPOSURES: ReadonlySet<Claim['state']> = new Set(['draft', 'open', 'reopened']);

/** The claim's actions: the states the API allows next, an exposure, a note, its handler. */
export function ActionsOfClaim({ claim }: { readonly claim: Claim }) {
  const { canHandle } = useContext(ActionsContext);
  return (
    <Panel title="Actions">
      {canHandle ? (
        <div className="actions" data-testid="claim-actions">
          {claim.next_states.map((state) => (
            <ClaimActionButton
              key={state}
              label={TRANSITION_LABELS[state]}
              action={{ kind: 'transition', state }}
            />
          ))}
          {TAKES_EXPOSURES.has(claim.state) ? (
            <ClaimActionButton label="Add an exposure" action={{ kind: 'exposure' }} />
          ) : null}
          <ClaimActionButton label="Add a note" action={{ kind: 'note' }} />
          <ClaimActionButton label="Assign a handler" action={{ kind: 'handler' }} />
        </div>
      ) : (
        <p className="hint" data-testid="claim-read-only">
          Your role can read this claim; handling it needs the claims or admin role.
        </p>
      )}
    </Panel>
  );
}
