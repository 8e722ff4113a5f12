import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime } from '../../../shared/format.ts';
import { ClaimStateTag, claimRoute, RouteLink, shortRef } from '../claims/claim-words.tsx';
import { useConsole, useLoad } from '../console-context.tsx';
import { DataTable } from '../data-table.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

/** The policy's claims, newest incident first, each leading to its claim page. */
export function ClaimsPanel({ scope }: { readonly scope: PolicyScope }) {
  const { api } = useConsole();
  const claims = useLoad(
    () =>
      unwrap(
        api.forTenant(scope.tenant).GET('/policys/{policy_reference}/claims', {
          params: { path: { policy_reference: scope.policyReference } },
        }),
      ),
    `${scope.key}#claims`,
  );
  return (
    <Panel title="Claims">
      <WhenLoaded load={claims} what="claims">
        {(list) =>
          list.claims.length === 0 ? (
            <p className="empty">No claims.</p>
          ) : (
            <DataTable
              label="Claims of this policy"
              testId="policy-claims"
              rows={list.claims}
              rowKey={(claim) => claim.claim_reference}
              columns={[
                {
                  header: 'Claim',
                  cell: (claim) => (
                    <RouteLink route={claimRoute(scope.tenant, claim.claim_reference)}>
                      {shortRef(claim)}
                    </RouteLink>
                  ),
                },
                { header: 'State', cell: (claim) => <ClaimStateTag state={claim.state} /> },
                { header: 'Incident', nowrap: true, cell: (claim) => formatDateTime(claim.occurred_at) },
                { header: 'Where', cell: (claim) => claim.place_name ?? claim.postcode ?? '—' },
                {
                  header: 'How',
                  cell: (claim) => (claim.source === 'crash' ? 'Crash detected' : 'Reported'),
                },
              ]}
            />
          )
        }
      </WhenLoaded>
    </Panel>
  );
}
