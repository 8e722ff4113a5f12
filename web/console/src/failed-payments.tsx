import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf } from './router.ts';
import type { Answer, Tenant } from './api-types.ts';
import { DataTable, FailureCell, type Column } from './data-table.tsx';
import { ForTenant, Loading } from './ui.tsx';

type FailedPayment = Answer<'payments.failed'>['payments'][number];

/** The company's failed payments (charges in dunning, refunds that failed), newest first, each leading to its policy. */
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
  const policyLink = (payment: FailedPayment) => {
    const target = {
      page: 'policy',
      companyReference: tenant.company.company_reference,
      environment: tenant.environment,
      policyReference: payment.policy_reference,
    } as const;
    return (
      <a
        href={hrefOf(target)}
        onClick={(event) => {
          followLink(event, target);
        }}
      >
        {payment.policy_reference}
      </a>
    );
  };
  const columns: readonly Column<FailedPayment>[] = [
    { header: 'Policy', cell: policyLink },
    { header: 'Created', nowrap: true, cell: (payment) => formatDateTime(payment.created_at) },
    // A failed refund is listed too: money the policyholder is owed still.
    { header: 'What', cell: (payment) => `${payment.type} for ${payment.purpose.replace(/_/g, ' ')}` },
    { header: 'Amount', number: true, cell: (payment) => formatMoney(payment.amount) },
    { header: 'Attempts', cell: (payment) => payment.attempts },
    {
      header: 'Decline',
      cell: (payment) => <FailureCell code={payment.decline_code} message={payment.error_message} />,
    },
    {
      header: 'Next attempt',
      nowrap: true,
      cell: (payment) =>
        payment.next_attempt_at === null ? 'None scheduled' : formatDateTime(payment.next_attempt_at),
    },
  ];
  return (
    <DataTable
      label="Failed payments"
      columns={columns}
      rows={payments}
      rowKey={(payment) => payment.payment_reference}
    />
  );
}
