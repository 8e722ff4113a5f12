import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../../shared/format.ts';
import type { Payment } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { DataTable, FailureCell, type Column } from '../data-table.tsx';
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

const PAYMENT_COLUMNS: readonly Column<Payment>[] = [
  { header: 'Created', nowrap: true, cell: (payment) => formatDateTime(payment.created_at) },
  { header: 'What', cell: (payment) => `${payment.type} for ${payment.purpose.replace(/_/g, ' ')}` },
  { header: 'Amount', number: true, cell: (payment) => formatMoney(payment.amount) },
  {
    header: 'Status',
    cell: (payment) => <span className={`status payment-${payment.status}`}>{payment.status}</span>,
  },
  { header: 'Attempts', cell: (payment) => payment.attempts },
  {
    header: 'Decline',
    cell: (payment) => <FailureCell code={payment.decline_code} message={payment.error_message} />,
  },
  {
    header: 'Next attempt',
    nowrap: true,
    cell: (payment) => (payment.next_attempt_at === null ? '—' : formatDateTime(payment.next_attempt_at)),
  },
  { header: 'Action', cell: (payment) => <RetryButton payment={payment} /> },
];

function PaymentsTable({ payments }: { payments: readonly Payment[] }) {
  return (
    <DataTable
      label="Payments"
      columns={PAYMENT_COLUMNS}
      rows={payments}
      rowKey={(payment) => payment.payment_reference}
    />
  );
}
