import { useState, type ReactNode } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { LoadFailed, PageMessages } from '../../../shared/messages.tsx';
import type { Claim, Environment, Tenant } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { ForCompany } from '../for-company.tsx';
import { Panel } from '../policy/panel.tsx';
import { Loading, useNotice } from '../ui.tsx';
import { ClaimActionDialog, type ClaimAction } from './claim-dialogs.tsx';
import { ActionsOfClaim, ClaimActions, useCanHandleClaims } from './claim-actions.tsx';
import { CoverPanel, ExposuresPanel, NotesPanel, PaymentsPanel, SummaryPanel } from './claim-panels.tsx';
import { PhotosPanel } from './claim-photos.tsx';
import { TimelinePanel, useClaimAudit } from './claim-timeline.tsx';
import { ClaimStateTag, RouteLink } from './claim-words.tsx';
import { CrashFilePanel } from './crash-file.tsx';

function Titled({ claimReference, children }: { claimReference: string; children: ReactNode }) {
  return (
    <>
      <h1>Claim {claimReference}</h1>
      {children}
    </>
  );
}

/** One claim for staff: the crash file, the timeline, the money, and the actions the role allows. */
export function ClaimPage(props: {
  companyReference: string;
  environment: Environment;
  claimReference: string;
}) {
  return (
    <ForCompany
      companyReference={props.companyReference}
      environment={props.environment}
      heading={`Claim ${props.claimReference}`}
      what="the claim"
    >
      {(tenant) => <ClaimView tenant={tenant} claimReference={props.claimReference} />}
    </ForCompany>
  );
}

/** The active claims handlers and admins, by id (the handler's email, and the choice of whom to assign). */
function useHandlers() {
  const { api } = useConsole();
  return useLoad(() => unwrap(api.client.GET('/admin/claim-handlers')), 'claim-handlers');
}

function ClaimView({ tenant, claimReference }: { tenant: Tenant; claimReference: string }) {
  const { api } = useConsole();
  const [generation, setGeneration] = useState(0);
  const key = `${tenant.company.company_reference}/${tenant.environment}/${claimReference}#${String(generation)}`;
  const claim = useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/claims/{claim_reference}', {
          params: { path: { claim_reference: claimReference } },
        }),
      ),
    key,
  );
  const audit = useClaimAudit(claimReference, key);
  const handlers = useHandlers();
  const [action, setAction] = useState<ClaimAction | undefined>();
  const messages = useNotice();
  const canHandle = useCanHandleClaims();
  if (claim.error !== undefined)
    return (
      <Titled claimReference={claimReference}>
        <LoadFailed what="The claim" error={claim.error} onRetry={claim.reload} />
      </Titled>
    );
  if (claim.data === undefined)
    return (
      <Titled claimReference={claimReference}>
        <Loading what="the claim" />
      </Titled>
    );
  const details: Claim = claim.data;
  const handlerEmail =
    details.handler_staff_id === null
      ? null
      : (handlers.data?.data.find((h) => h.staff_id === details.handler_staff_id)?.email ??
        details.handler_staff_id);
  return (
    <ClaimActions value={{ canHandle, open: setAction }}>
      <h1>
        Claim <span data-testid="claim-reference">{details.claim_reference}</span>
      </h1>
      <p className="lead">
        <ClaimStateTag state={details.state} />
        {details.referred_at === null ? null : (
          <span className="status claim-referred">referred to staff</span>
        )}
        <span>
          Policy{' '}
          <RouteLink
            route={{
              page: 'policy',
              companyReference: tenant.company.company_reference,
              environment: tenant.environment,
              policyReference: details.policy_reference,
            }}
          >
            {details.policy_reference}
          </RouteLink>
        </span>
        <span>
          {tenant.company.name} ({tenant.company.company_reference})
        </span>
        <span className={`env env-${tenant.environment}`}>{tenant.environment}</span>
      </p>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <ActionsOfClaim claim={details} />
      <div className="columns">
        <SummaryPanel claim={details} handlerEmail={handlerEmail} />
        <CoverPanel claim={details} />
      </div>
      {details.crash_file === null ? null : (
        <Panel title="Crash file">
          <CrashFilePanel claim={details} crash={details.crash_file} />
        </Panel>
      )}
      <ExposuresPanel claim={details} />
      <PaymentsPanel claim={details} />
      <NotesPanel claim={details} />
      <PhotosPanel claim={details} tenant={tenant} />
      <Panel title="Documents">
        <p className="empty">
          No documents are held with this claim: the policyholder’s messages about it go by email.
        </p>
      </Panel>
      <TimelinePanel claim={details} audit={audit} />
      {action === undefined ? null : (
        <ClaimActionDialog
          action={action}
          tenant={tenant}
          claim={details}
          handlers={handlers.data?.data ?? []}
          onClose={() => {
            setAction(undefined);
          }}
          onDone={(notice) => {
            messages.setNotice(notice);
            setGeneration((n) => n + 1);
          }}
        />
      )}
    </ClaimActions>
  );
}
