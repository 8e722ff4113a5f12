import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf } from './router.ts';
import type { Tenant } from './api-types.ts';
import { ForTenant, Loading, TableBox } from './ui.tsx';

/** The company's failed payments in dunning, newest first, each leading to its policy. */
export function FailedPaymentsPage() {
  return (
    <>
      <h1>Failed payments</h1>
      <ForTenant>{(tenant) => <FailedPayments tenant={tenant} />}</ForTenant>
    </>
  );
}

function FailedPayments({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const failed = useLoad(
    () => unwrap(api.forTenant(tenant).GET('/payments/failed')),
    `${tenant.company.company_reference}/${tenant.environment}`,
  );
  if (failed.error !== undefined)
    return <LoadFailed what="The failed payments" error={failed.error} onRetry={failed.reload} />;
  if (failed.data === undefined) return <Loading what="failed payments" />;
  const payments = failed.data.payments;
  if (payments.length === 0)
    return (
      <p className="empty" role="status">
        No failed payments for {tenant.company.name} in {tenant.environment}.
      </p>
    );
  return (
    <TableBox label="Failed payments">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Policy</th>
            <th scope="col">Created</th>
            <th scope="col">What</th>
            <th scope="col" className="number">
              Amount
            </th>
            <th scope="col">Attempts</th>
            <th scope="col">Decline</th>
            <th scope="col">Next attempt</th>
          </tr>
        </thead>
        <tbody>
          {payments.map((payment) => {
            const target = {
              page: 'policy',
              companyReference: tenant.company.company_reference,
              environment: tenant.environment,
              policyReference: payment.policy_reference,
            } as const;
            return (
              <tr key={payment.payment_reference}>
                <th scope="row">
                  <a
                    href={hrefOf(target)}
                    onClick={(event) => {
                      followLink(event, target);
                    }}
                  >
                    {payment.policy_reference}
                  </a>
                </th>
                <td className="nowrap">{formatDateTime(payment.created_at)}</td>
                <td>{payment.purpose.replace(/_/g, ' ')}</td>
                <td className="number">{formatMoney(payment.amount)}</td>
                <td>{payment.attempts}</td>
                <td>
                  {payment.decline_code ?? '—'}
                  {payment.error_message === null ? null : (
                    <>
                      <br />
                      <span className="hint">{payment.error_message}</span>
                    </>
                  )}
                </td>
                <td className="nowrap">
                  {payment.next_attempt_at === null
                    ? 'None scheduled'
                    : formatDateTime(payment.next_attempt_at)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}
