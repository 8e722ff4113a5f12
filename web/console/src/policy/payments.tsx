import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../../shared/format.ts';
import type { Payment } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { TableBox } from '../ui.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';
import { ActionButton } from './policy-actions.tsx';

/** The policy's payments, with their attempts and declines. */
export function usePayments(
  { tenant, policyReference, key }: PolicyScope,
  /** Bumped to load again after an action. */
  generation: number,
) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/payments', { params: { query: { policy_reference: policyReference } } }),
      ),
    `${key}#${generation}`,
  );
}

/** The payments; a failed charge for a version can be retried now. */
export function PaymentsPanel({ payments }: { readonly payments: ReturnType<typeof usePayments> }) {
  return (
    <Panel title="Payments">
      <WhenLoaded load={payments} what="payments">
        {(page) =>
          page.payments.length === 0 ? (
            <p className="empty">No payments.</p>
          ) : (
            <PaymentsTable payments={page.payments} />
          )
        }
      </WhenLoaded>
    </Panel>
  );
}

function RetryButton({ payment }: { payment: Payment }) {
  const versionReference = payment.policy_version_reference;
  if (payment.type !== 'charge' || payment.status !== 'failed' || versionReference === null) return null;
  return <ActionButton label="Retry" action={{ kind: 'retry', payment, versionReference }} />;
}

function PaymentsTable({ payments }: { payments: readonly Payment[] }) {
  return (
    <TableBox label="Payments">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">What</th>
            <th scope="col" className="number">
              Amount
            </th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Decline</th>
            <th scope="col">Next attempt</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {payments.map((payment) => (
            <tr key={payment.payment_reference}>
              <th scope="row" className="nowrap">
                {formatDateTime(payment.created_at)}
              </th>
              <td>
                {payment.type} for {payment.purpose.replace(/_/g, ' ')}
              </td>
              <td className="number">{formatMoney(payment.amount)}</td>
              <td>
                <span className={`status payment-${payment.status}`}>{payment.status}</span>
              </td>
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
                {payment.next_attempt_at === null ? '—' : formatDateTime(payment.next_attempt_at)}
              </td>
              <td>
                <RetryButton payment={payment} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
