import type { ReactNode } from 'react';
import { TableBox } from './ui.tsx';

/** One column of a DataTable: its heading and how a row fills its cell. */
export interface Column<T> {
  readonly header: string;
  readonly cell: (row: T) => ReactNode;
  /** Right-aligned figures (money, counts). */
  readonly number?: boolean;
  /** Kept on one line (dates and times). */
  readonly nowrap?: boolean;
}

/**
 * The console's list of records: a table whose first column heads each row, in a region a keyboard can
 * scroll sideways on a phone. Every list of the console is drawn by this one component.
 */
export function DataTable<T>(props: {
  /** The region's name, read out when it takes focus: "Payments". */
  readonly label: string;
  readonly columns: readonly Column<T>[];
  readonly rows: readonly T[];
  readonly rowKey: (row: T) => string;
  readonly testId?: string;
}) {
  const classOf = (column: Column<T>): string | undefined =>
    [column.number === true ? 'number' : '', column.nowrap === true ? 'nowrap' : '']
      .filter(Boolean)
      .join(' ') || undefined;
  return (
    <TableBox label={props.label}>
      <table className="grid" data-testid={props.testId}>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.header} scope="col" className={column.number === true ? 'number' : undefined}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column, i) =>
                i === 0 ? (
                  <th key={column.header} scope="row" className={classOf(column)}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={column.header} className={classOf(column)}>
                    {column.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** A failure's code with its sentence under it, or a dash. */
export function FailureCell(props: { readonly code: string | null; readonly message: string | null }) {
  return (
    <>
      {props.code ?? '—'}
      {props.message === null ? null : (
        <>
          <br />
          <span className="hint">{props.message}</span>
        </>
      )}
    </>
  );
}

/** A Direct Debit collection's status in staff's words: `succeeded` is paid. */
const COLLECTION_STATUS: Readonly<Record<string, string>> = {
  scheduled: 'scheduled',
  processing: 'processing',
  succeeded: 'paid',
  failed: 'failed',
};

/** A collection's status as a coloured tag. */
export function CollectionStatus({ status }: { readonly status: string }) {
  return <span className={`status collection-${status}`}>{COLLECTION_STATUS[status] ?? status}</span>;
}
