import { useId, useMemo, useState, type ReactNode } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { LoadFailed, PageMessages } from '../../../shared/messages.tsx';
import type { Environment, Policy, Tenant } from '../api-types.ts';
import { useCanAct, useConsole, useLoad } from '../console-context.tsx';
import { Loading, useNotice } from '../ui.tsx';
import { ActionDialog } from './action-dialogs.tsx';
import { ForCompany } from '../for-company.tsx';
import { AuditPanel, useAuditTrail } from './audit.tsx';
import { ClaimsPanel } from './claims.tsx';
import { DevicesPanel, useDevices } from './devices.tsx';
import { DirectDebitPanel, usePolicyDirectDebit } from './direct-debit.tsx';
import { DocumentsPanel } from './documents.tsx';
import { JourneysPanel, useJourneys } from './journeys.tsx';
import type { PolicyScope } from './panel.tsx';
import { PaymentsPanel, usePayments } from './payments.tsx';
import { ScoresPanel, useScores } from './scores.tsx';
import { ActionsContext, ActionsPanel, useCredits, type Action } from './policy-actions.tsx';
import { RenewalPricesPanel } from './renewal-prices.tsx';
import { StatementsPanel, useStatements } from './statements.tsx';
import { SummaryPanel } from './summary.tsx';
import { VersionsPanel } from './versions.tsx';

/** The parts of the page that load again after an action. */
type Part = 'policy' | 'journeys' | 'statements' | 'payments' | 'directDebit' | 'audit';

/** What each action changes besides the audit trail (which every action adds to). */
const CHANGES: Readonly<Record<Action['kind'], readonly Part[]>> = {
  void: ['journeys'],
  credit: [],
  retry: ['payments', 'statements', 'directDebit'],
  cancel: ['policy', 'payments', 'directDebit'],
  welcome: [],
};

const NONE_YET: Readonly<Record<Part, number>> = {
  policy: 0,
  journeys: 0,
  statements: 0,
  payments: 0,
  directDebit: 0,
  audit: 0,
};

/** The page's heading over what is shown while the policy is not there. */
function Titled({ policyReference, children }: { policyReference: string; children: ReactNode }) {
  return (
    <>
      <h1>Policy {policyReference}</h1>
      {children}
    </>
  );
}

/** One policy for staff: everything about it, its audit trail, and the actions the role allows. */
export function PolicyPage(props: {
  companyReference: string;
  environment: Environment;
  policyReference: string;
}) {
  return (
    <ForCompany
      companyReference={props.companyReference}
      environment={props.environment}
      heading={`Policy ${props.policyReference}`}
      what="the policy"
    >
      {(tenant) => <PolicyView tenant={tenant} policyReference={props.policyReference} />}
    </ForCompany>
  );
}

/** The policy as GET /policys/{policy_reference} answers it. */
function usePolicy({ tenant, policyReference, key }: PolicyScope, generation: number) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/policys/{policy_reference}', {
          params: { path: { policy_reference: policyReference } },
        }),
      ),
    `${key}#${generation}`,
  );
}

/**
 * The policy and every part of it, each loaded by its own request, all at once (the parts' requests do
 * not wait for the policy's); an action loads again the parts it changed.
 */
function PolicyView({ tenant, policyReference }: { tenant: Tenant; policyReference: string }) {
  const scope: PolicyScope = {
    tenant,
    policyReference,
    key: `${tenant.company.company_reference}/${tenant.environment}/${policyReference}`,
  };
  const [generations, setGenerations] = useState(NONE_YET);
  const policy = usePolicy(scope, generations.policy);
  const parts = {
    journeys: useJourneys(scope, generations.journeys),
    scores: useScores(scope),
    statements: useStatements(scope, generations.statements),
    payments: usePayments(scope, generations.payments),
    directDebit: usePolicyDirectDebit(scope, generations.directDebit),
    devices: useDevices(scope),
    credits: useCredits(scope),
    audit: useAuditTrail(scope, generations.audit),
  };
  const [action, setAction] = useState<Action | undefined>();
  const [balance, setBalance] = useState<number | undefined>();
  const messages = useNotice();
  const canAct = useCanAct();
  const ids = useId();
  const actions = useMemo(
    () => ({ canAct, readOnlyHintId: `${ids}-read-only`, open: setAction }),
    [canAct, ids],
  );
  const done = (notice: string, what: Action['kind']) => {
    messages.setNotice(notice);
    setGenerations((was) => {
      const next = { ...was };
      for (const part of [...CHANGES[what], 'audit' as const]) next[part] += 1;
      return next;
    });
  };

  if (policy.error !== undefined)
    return (
      <Titled policyReference={policyReference}>
        <LoadFailed what="The policy" error={policy.error} onRetry={policy.reload} />
      </Titled>
    );
  if (policy.data === undefined)
    return (
      <Titled policyReference={policyReference}>
        <Loading what="the policy" />
      </Titled>
    );
  const details: Policy = policy.data;
  return (
    <ActionsContext.Provider value={actions}>
      <h1>
        Policy <span data-testid="policy-reference">{details.policy_reference}</span>
      </h1>
      <p className="lead">
        <span className={`status status-${details.status}`}>{details.status}</span>
        <span>
          {tenant.company.name} ({tenant.company.company_reference})
        </span>
        <span className={`env env-${tenant.environment}`}>{tenant.environment}</span>
      </p>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <ActionsPanel
        live={details.status === 'active' || details.status === 'pending'}
        balance={balance ?? parts.credits.data?.balance}
      />
      <div className="columns">
        <SummaryPanel policy={details} tenant={tenant} />
        <DevicesPanel devices={parts.devices} />
      </div>
      <VersionsPanel versions={details.versions} />
      <JourneysPanel journeys={parts.journeys} />
      <ScoresPanel scores={parts.scores} journeys={parts.journeys} />
      <PaymentsPanel payments={parts.payments} />
      <DirectDebitPanel directDebit={parts.directDebit} />
      <StatementsPanel statements={parts.statements} />
      <ClaimsPanel scope={scope} />
      <DocumentsPanel scope={scope} />
      <RenewalPricesPanel scope={scope} />
      <AuditPanel audit={parts.audit} />
      {action === undefined ? null : (
        <ActionDialog
          action={action}
          tenant={tenant}
          policy={details}
          onClose={() => {
            setAction(undefined);
          }}
          onDone={done}
          onBalance={setBalance}
        />
      )}
    </ActionsContext.Provider>
  );
}
