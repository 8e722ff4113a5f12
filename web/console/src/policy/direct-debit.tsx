import { formatDate, formatDateTime, formatMoney } from '../../../shared/format.ts';
import { CollectionStatus, DataTable, FailureCell, type Column } from '../data-table.tsx';
import { useConsole, useLoad } from '../console-context.tsx';
import { loadPolicyDirectDebit, type Collection, type Mandate } from '../direct-debit-api.ts';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

/** The policy's Direct Debit mandates and collections. */
export function usePolicyDirectDebit(
  { tenant, policyReference, key }: PolicyScope,
  /** Bumped to load again after an action. */
  generation: number,
) {
  const { api } = useConsole();
  return useLoad(() => loadPolicyDirectDebit(api.forTenant(tenant), policyReference), `${key}#${generation}`);
}

const MANDATE_COLUMNS: readonly Column<Mandate>[] = [
  { header: 'Reference', cell: (mandate) => mandate.reference ?? 'Not yet given' },
  {
    header: 'Status',
    cell: (mandate) => (
      <span className={`status mandate-${mandate.status}`}>
        {mandate.status}
        {mandate.isDefault ? ' (default)' : ''}
      </span>
    ),
  },
  {
    header: 'Account',
    cell: (mandate) =>
      [
        mandate.sortCode === null ? null : `sort code ${mandate.sortCode}`,
        mandate.accountLast4 === null ? null : `ending ${mandate.accountLast4}`,
      ]
        .filter(Boolean)
        .join(', ') || '—',
  },
  { header: 'Holder', cell: (mandate) => mandate.holderName ?? '—' },
  { header: 'Set up', nowrap: true, cell: (mandate) => formatDateTime(mandate.createdAt) },
  {
    header: 'Cancelled',
    cell: (mandate) =>
      mandate.cancelledAt === null ? (
        '—'
      ) : (
        <FailureCell code={formatDateTime(mandate.cancelledAt)} message={mandate.cancelReason} />
      ),
  },
];

const COLLECTION_COLUMNS: readonly Column<Collection>[] = [
  {
    header: 'Collect on',
    nowrap: true,
    cell: (collection) => (collection.collectOn === null ? 'By card' : formatDate(collection.collectOn)),
  },
  { header: 'Amount', number: true, cell: (collection) => formatMoney(collection.amount) },
  { header: 'State', cell: (collection) => <CollectionStatus status={collection.status} /> },
  {
    header: 'Failure',
    cell: (collection) => <FailureCell code={collection.failureCode} message={collection.failureMessage} />,
  },
  {
    header: 'Notice sent',
    nowrap: true,
    cell: (collection) => (collection.noticeSentAt === null ? '—' : formatDateTime(collection.noticeSentAt)),
  },
  {
    header: 'Settled',
    nowrap: true,
    cell: (collection) => (collection.settledAt === null ? '—' : formatDateTime(collection.settledAt)),
  },
];

/** Mandates with their status; collections with their state and, when one failed, why. */
export function DirectDebitPanel({
  directDebit,
}: {
  readonly directDebit: ReturnType<typeof usePolicyDirectDebit>;
}) {
  return (
    <Panel title="Direct Debit">
      <WhenLoaded load={directDebit} what="Direct Debit">
        {(read) => (
          <>
            <h3>Mandates</h3>
            {read.mandates.length === 0 ? (
              <p className="empty">No Direct Debit mandate.</p>
            ) : (
              <DataTable
                label="Mandates"
                testId="mandates"
                columns={MANDATE_COLUMNS}
                rows={read.mandates}
                rowKey={(mandate) => mandate.id}
              />
            )}
            <h3>Collections</h3>
            {read.collections.length === 0 ? (
              <p className="empty">No Direct Debit collections.</p>
            ) : (
              <DataTable
                label="Collections"
                testId="collections"
                columns={COLLECTION_COLUMNS}
                rows={read.collections}
                rowKey={(collection) => collection.reference}
              />
            )}
          </>
        )}
      </WhenLoaded>
    </Panel>
  );
}
