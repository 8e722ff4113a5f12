import { unwrap } from '../../../../sdk/src/client.ts';
import { AuditGroups } from '../audit.tsx';
import { useConsole, useLoad } from '../console-context.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

/** The policy's audit trail: the latest 100 records of every action on it. */
export function useAuditTrail(
  { tenant, policyReference, key }: PolicyScope,
  /** Bumped to load again after an action. */
  generation: number,
) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.client.GET('/admin/audit', {
          params: {
            query: {
              policy_reference: policyReference,
              company_reference: tenant.company.company_reference,
              environment: tenant.environment,
              limit: 100,
            },
          },
        }),
      ),
    `${key}#${generation}`,
  );
}

export function AuditPanel({ audit }: { readonly audit: ReturnType<typeof useAuditTrail> }) {
  return (
    <Panel title="Audit">
      <WhenLoaded load={audit} what="audit records">
        {(page) => <AuditGroups rows={page.data} label="Audit records of this policy" />}
      </WhenLoaded>
    </Panel>
  );
}
