import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDate, formatMoney } from '../../../shared/format.ts';
import type { Statement } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { TableBox } from '../ui.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

/** The policy's latest 12 statements. */
export function useStatements(
  { tenant, policyReference, key }: PolicyScope,
  /** Bumped to load again after an action. */
  generation: number,
) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/statements', {
          params: { query: { policy_reference: policyReference, limit: 12 } },
        }),
      ),
    `${key}#${generation}`,
  );
}

/** What a statement's charge came to: paid, failed and why, or none. */
function paymentOf(statement: Statement): string {
  if (statement.payment === undefined) return '—';
  return statement.payment.payment_amount === null
    ? `Failed: ${statement.payment.error_message ?? 'declined'}`
    : `Paid ${formatMoney(statement.payment.payment_amount)}`;
}

export function StatementsPanel({ statements }: { readonly statements: ReturnType<typeof useStatements> }) {
  return (
    <Panel title="Statements">
      <WhenLoaded load={statements} what="statements">
        {(page) =>
          page.statements.length === 0 ? (
            <p className="empty">No statements yet.</p>
          ) : (
            <StatementsTable statements={page.statements} />
          )
        }
      </WhenLoaded>
    </Panel>
  );
}

function StatementsTable({ statements }: { statements: readonly Statement[] }) {
  return (
    <TableBox label="Statements">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Period</th>
            <th scope="col">Journeys</th>
            <th scope="col" className="number">
              Distance
            </th>
            <th scope="col" className="number">
              Total
            </th>
            <th scope="col" className="number">
              Credits used
            </th>
            <th scope="col" className="number">
              Billed
            </th>
            <th scope="col">Payment</th>
          </tr>
        </thead>
        <tbody>
          {statements.map((statement) => (
            <tr key={statement.policy_version_reference}>
              <th scope="row" className="nowrap">
                {formatDate(statement.statement_start_date)} to {formatDate(statement.statement_end_date)}
              </th>
              <td>{statement.journey_count}</td>
              <td className="number">{statement.total_miles} miles</td>
              <td className="number">{formatMoney(statement.total_premium)}</td>
              <td className="number">{formatMoney(statement.credits_used)}</td>
              <td className="number">{formatMoney(statement.billed_premium)}</td>
              <td>{paymentOf(statement)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
