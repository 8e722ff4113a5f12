import type { ReactNode } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import type { Environment, Tenant } from './api-types.ts';
import { useConsole, useLoad } from './console-context.tsx';
import { Loading } from './ui.tsx';

/**
 * A page about one record of a company named in its address (a policy, a claim): the company is
 * looked up first, and until it is there the page's heading stands over why not (loading, or failed
 * with a retry).
 */
export function ForCompany(props: {
  readonly companyReference: string;
  readonly environment: Environment;
  /** The page's heading while the company is not there: "Policy P-1". */
  readonly heading: string;
  /** What is loading, for the status: "the policy". */
  readonly what: string;
  readonly children: (tenant: Tenant) => ReactNode;
}) {
  const { api } = useConsole();
  const company = useLoad(
    () =>
      unwrap(
        api.client.GET('/admin/companies/{company_reference}', {
          params: { path: { company_reference: props.companyReference } },
        }),
      ),
    props.companyReference,
  );
  if (company.data !== undefined && company.error === undefined)
    return <>{props.children({ company: company.data, environment: props.environment })}</>;
  return (
    <>
      <h1>{props.heading}</h1>
      {company.error === undefined ? (
        <Loading what={props.what} />
      ) : (
        <LoadFailed what="The company" error={company.error} onRetry={company.reload} />
      )}
    </>
  );
}
