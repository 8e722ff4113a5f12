import { createContext, useContext } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { formatMoney } from '../../../shared/format.ts';
import type { Journey, Payment } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { Panel, type PolicyScope } from './panel.tsx';

/** What staff may do to a policy, each confirmed in a dialog. */
export type Action =
  | { readonly kind: 'void'; readonly journey: Journey }
  | { readonly kind: 'credit' }
  | { readonly kind: 'retry'; readonly payment: Payment; readonly versionReference: string }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'welcome' };

interface Actions {
  /** The signed-in role may act on policies. */
  readonly canAct: boolean;
  /** The id of the sentence saying why the buttons are disabled (for a role that may only read). */
  readonly readOnlyHintId: string;
  /** Opens the action's dialog. */
  readonly open: (action: Action) => void;
}

export const ActionsContext = createContext<Actions>({ canAct: false, readOnlyHintId: '', open: () => {} });

/** An action's button: absent the role's right to it, shown disabled with the reason beside it. */
export function ActionButton(props: {
  readonly label: string;
  readonly action: Action;
  readonly enabled?: boolean;
}) {
  const { canAct, readOnlyHintId, open } = useContext(ActionsContext);
  return (
    <button
      type="button"
      className="secondary"
      disabled={!canAct || props.enabled === false}
      aria-describedby={canAct ? undefined : readOnlyHintId}
      onClick={() => {
        open(props.action);
      }}
    >
      {props.label}
    </button>
  );
}

/** The actions on the policy as a whole, and its credit balance. */
export function ActionsPanel({
  live,
  balance,
}: {
  readonly live: boolean;
  readonly balance: number | undefined;
}) {
  const { canAct, readOnlyHintId } = useContext(ActionsContext);
  return (
    <Panel title="Actions">
      {canAct ? null : (
        <p className="hint" id={readOnlyHintId}>
          Your role can read this policy but not act on it.
        </p>
      )}
      <div className="actions">
        <ActionButton label="Grant a credit" action={{ kind: 'credit' }} />
        <ActionButton label="Resend the welcome email" action={{ kind: 'welcome' }} />
        <ActionButton label="Cancel the policy" action={{ kind: 'cancel' }} enabled={live} />
      </div>
      {balance === undefined ? null : (
        <p data-testid="credit-balance">Credit balance: {formatMoney(balance)}</p>
      )}
    </Panel>
  );
}

/** The policy's credit balance. */
export function useCredits({ tenant, policyReference, key }: PolicyScope) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.client.GET('/admin/credits', {
          params: {
            query: {
              company_reference: tenant.company.company_reference,
              environment: tenant.environment,
              policy_reference: policyReference,
            },
          },
        }),
      ),
    key,
  );
}
