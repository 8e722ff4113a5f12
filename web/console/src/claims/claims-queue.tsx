import { useId, useState } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime } from '../../../shared/format.ts';
import { LoadFailed } from '../../../shared/messages.tsx';
import type { Claim, ClaimState, Tenant } from '../api-types.ts';
import { useConsole, useLoad, type Loaded } from '../console-context.tsx';
import { DataTable, type Column } from '../data-table.tsx';
import { ForTenant, Loading } from '../ui.tsx';
import { ClaimStateTag, claimRoute, formatSince, RouteLink, shortRef, STATE_NAMES } from './claim-words.tsx';

const STATES = Object.keys(STATE_NAMES) as ClaimState[];
type Referred = 'any' | 'yes' | 'no';

/** The company's claims: new first notices (drafts) first, with the time since the crash. */
export function ClaimsPage() {
  return (
    <>
      <h1>Claims</h1>
      <ForTenant>{(tenant) => <ClaimsQueue tenant={tenant} />}</ForTenant>
    </>
  );
}

function ClaimsQueue({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const ids = useId();
  const [state, setState] = useState<ClaimState | ''>('');
  const [referred, setReferred] = useState<Referred>('any');
  const [generation, setGeneration] = useState(0);
  const claims = useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/claims', {
          params: {
            query: {
              limit: 200,
              ...(state === '' ? {} : { state }),
              ...(referred === 'any' ? {} : { referred: referred === 'yes' }),
            },
          },
        }),
      ),
    `${tenant.company.company_reference}/${tenant.environment}/${state}/${referred}#${String(generation)}`,
  );
  return (
    <>
      <form
        className="claim-filters"
        aria-label="Filter the claims"
        onSubmit={(event) => {
          event.preventDefault();
          setGeneration((n) => n + 1);
        }}
      >
        <div className="field">
          <label htmlFor={`${ids}-state`}>State</label>
          <select
            id={`${ids}-state`}
            value={state}
            onChange={(event) => {
              setState(event.target.value as ClaimState | '');
            }}
          >
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {STATE_NAMES[s]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-referred`}>Referred to staff</label>
          <select
            id={`${ids}-referred`}
            value={referred}
            onChange={(event) => {
              setReferred(event.target.value as Referred);
            }}
          >
            <option value="any">Referred or not</option>
            <option value="yes">Referred (unanswered drafts)</option>
            <option value="no">Not referred</option>
          </select>
        </div>
        <div className="actions">
          <button type="submit" className="secondary">
            Refresh
          </button>
        </div>
      </form>
      <QueueTable tenant={tenant} claims={claims} />
    </>
  );
}

function QueueTable({ tenant, claims }: { tenant: Tenant; claims: Loaded<{ claims: Claim[] }> }) {
  if (claims.error !== undefined)
    return <LoadFailed what="The claims" error={claims.error} onRetry={claims.reload} />;
  if (claims.data === undefined) return <Loading what="claims" />;
  const rows = claims.data.claims;
  if (rows.length === 0)
    return (
      <p className="empty" role="status">
        No claims match for {tenant.company.name} in {tenant.environment}.
      </p>
    );
  const now = Date.now();
  const columns: readonly Column<Claim>[] = [
    {
      header: 'Claim',
      cell: (claim) => (
        <RouteLink route={claimRoute(tenant, claim.claim_reference)}>{shortRef(claim)}</RouteLink>
      ),
    },
    {
      header: 'State',
      cell: (claim) => (
        <>
          <ClaimStateTag state={claim.state} />
          {claim.referred_at === null ? null : (
            <>
              {' '}
              <span className="status claim-referred">referred to staff</span>
            </>
          )}
        </>
      ),
    },
    {
      // A reported claim has no crash: its age is the incident's (the How column tells which).
      header: 'Since the crash',
      nowrap: true,
      cell: (claim) => formatSince(claim.occurred_at, now),
    },
    { header: 'Incident', nowrap: true, cell: (claim) => formatDateTime(claim.occurred_at) },
    { header: 'Where', cell: (claim) => claim.place_name ?? claim.postcode ?? '—' },
    { header: 'How', cell: (claim) => (claim.source === 'crash' ? 'Crash detected' : 'Reported') },
    {
      header: 'Policy',
      cell: (claim) => (
        <RouteLink
          route={{
            page: 'policy',
            companyReference: tenant.company.company_reference,
            environment: tenant.environment,
            policyReference: claim.policy_reference,
          }}
        >
          {claim.policy_reference}
        </RouteLink>
      ),
    },
  ];
  return (
    <DataTable
      label="Claims"
      testId="claims-queue"
      columns={columns}
      rows={rows}
      rowKey={(claim) => claim.claim_reference}
    />
  );
}
