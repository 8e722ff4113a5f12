import { unwrap, type operations } from '../../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../../shared/format.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { DataTable, type Column } from '../data-table.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

type RenewalPrice =
  operations['policies.renewalPrices']['responses'][200]['content']['application/json']['renewal_prices'][number];

const money = (pounds: number | null): string => (pounds === null ? '—' : formatMoney(pounds));

/**
 * The policy's renewal prices, newest first (FCA ICOBS 6B: a renewal never above the equivalent
 * new-business price): the renewal, the new-business equivalent, last year's, and whether the cap applied.
 */
export function RenewalPricesPanel({ scope }: { readonly scope: PolicyScope }) {
  const { api } = useConsole();
  const prices = useLoad(
    () =>
      unwrap(
        api.forTenant(scope.tenant).GET('/policys/{policy_reference}/renewal-prices', {
          params: { path: { policy_reference: scope.policyReference } },
        }),
      ),
    `${scope.key}#renewal-prices`,
  );
  const columns: readonly Column<RenewalPrice>[] = [
    { header: 'Priced', nowrap: true, cell: (row) => formatDateTime(row.priced_at) },
    { header: 'Stage', cell: (row) => row.stage },
    {
      header: 'Outcome',
      cell: (row) => (row.reasons.length === 0 ? row.outcome : `${row.outcome}: ${row.reasons.join('; ')}`),
    },
    { header: 'Renewal a year', number: true, cell: (row) => money(row.renewal_yearly_premium_estimate) },
    {
      header: 'New business a year',
      number: true,
      cell: (row) => money(row.new_business_yearly_premium_estimate),
    },
    { header: 'Last year', number: true, cell: (row) => money(row.last_year_yearly_premium_estimate) },
    { header: 'Cap applied', cell: (row) => (row.cap_applied ? `Yes (${row.capped.join(', ')})` : 'No') },
    {
      header: 'Held to notice',
      cell: (row) => (row.held_to_notice.length === 0 ? '—' : row.held_to_notice.join(', ')),
    },
    {
      header: 'Rate book',
      cell: (row) =>
        row.rate_book_reference === null ? '—' : `${row.rate_book_reference} v${String(row.version_number)}`,
    },
  ];
  return (
    <Panel title="Renewal prices">
      <WhenLoaded load={prices} what="renewal prices">
        {(answer) =>
          answer.renewal_prices.length === 0 ? (
            <p className="empty">No renewal priced by a rate book yet.</p>
          ) : (
            <DataTable
              label="Renewal prices"
              columns={columns}
              rows={answer.renewal_prices}
              rowKey={(row) => `${row.priced_at}-${row.stage}`}
            />
          )
        }
      </WhenLoaded>
    </Panel>
  );
}
