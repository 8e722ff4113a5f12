import { useEffect, useId, useState } from 'react';

import { formatDateTime } from '../../app/src/format.ts';
import { LoadFailed } from '../../app/src/messages.tsx';
import { consoleError } from './api.ts';
import { useConsole } from './console-context.tsx';
import type { AuditRow, Page } from './types.ts';
import { Field, Loading } from './ui.tsx';

interface AuditGroup {
  readonly requestId: string;
  readonly first: AuditRow;
  readonly rows: readonly AuditRow[];
}

/** The rows of one action share its request id: one group each, in the order they came. */
export function groupByRequest(rows: readonly AuditRow[]): AuditGroup[] {
  const groups = new Map<string, AuditRow[]>();
  for (const row of rows) {
    const group = groups.get(row.request_id);
    if (group === undefined) groups.set(row.request_id, [row]);
    else group.push(row);
  }
  return [...groups].map(([requestId, members]) => ({
    requestId,
    first: members[0] as AuditRow,
    rows: members,
  }));
}

const show = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/** The columns a row's change touched: every column of an insert or delete, the changed ones of an update. */
function changedFields(row: AuditRow): Array<{ name: string; before: unknown; after: unknown }> {
  const before = row.before ?? {};
  const after = row.after ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return names
    .filter(
      (name) => row.operation !== 'update' || JSON.stringify(before[name]) !== JSON.stringify(after[name]),
    )
    .map((name) => ({ name, before: before[name], after: after[name] }));
}

const actorName = (actor: string): string => actor.replace(/^staff:/, '');

/** Audit rows as actions: when, who, what, the outcome, and each database row the action changed. */
export function AuditGroups({ rows, label }: { rows: readonly AuditRow[]; label: string }) {
  const groups = groupByRequest(rows);
  if (groups.length === 0) return <p className="empty">No audit records.</p>;
  return (
    <ol className="audit" aria-label={label}>
      {groups.map(({ requestId, first, rows: members }) => {
        const changes = members.filter((row) => row.table !== null);
        return (
          <li key={requestId} className={`audit-group outcome-${first.outcome}`} data-testid="audit-group">
            <p className="audit-head">
              <strong className="audit-action">{first.action}</strong>{' '}
              <span className={`status outcome outcome-${first.outcome}`}>
                {first.outcome === 'ok' ? 'done' : 'denied'}
              </span>
            </p>
            <p className="audit-meta">
              {formatDateTime(first.occurred_at)} · {actorName(first.actor)}
              {first.role === null ? '' : ` (${first.role})`}
              {first.policy_reference === null ? '' : ` · policy ${first.policy_reference}`}
              {first.company_reference === null
                ? ''
                : ` · ${first.company_reference}${first.environment === null ? '' : ` ${first.environment}`}`}
            </p>
            {changes.length === 0 ? null : (
              <details className="audit-changes">
                <summary>
                  {changes.length} {changes.length === 1 ? 'row changed' : 'rows changed'}
                </summary>
                <ul>
                  {changes.map((row) => (
                    <li key={String(row.id)}>
                      <span className="audit-op">
                        {row.operation ?? 'change'} {row.table}
                        {row.key === null ? '' : ` ${row.key}`}
                      </span>
                      <ul className="audit-fields">
                        {changedFields(row).map((field) => (
                          <li key={field.name}>
                            <code>{field.name}</code>:{' '}
                            {row.operation === 'update' ? (
                              <>
                                {show(field.before)} → {show(field.after)}
                              </>
                            ) : (
                              show(row.operation === 'delete' ? field.before : field.after)
                            )}
                          </li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ul>
              </details>
            )}
            <p className="audit-meta hint">
              Request {requestId}
              {first.source_address === null ? '' : ` from ${first.source_address}`}
            </p>
          </li>
        );
      })}
    </ol>
  );
}

interface Filters {
  readonly actor: string;
  readonly policy_reference: string;
  readonly company_reference: string;
  readonly request_id: string;
  readonly from: string;
  readonly to: string;
}

const NO_FILTERS: Filters = {
  actor: '',
  policy_reference: '',
  company_reference: '',
  request_id: '',
  from: '',
  to: '',
};

/** Everything staff and the admin key did, newest first, filtered by who, when and what. */
export function AuditPage() {
  const { api } = useConsole();
  const id = useId();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<AuditRow[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);

  const query = (after: string | undefined) => ({
    actor:
      filters.actor === ''
        ? undefined
        : filters.actor.includes(':')
          ? filters.actor
          : `staff:${filters.actor}`,
    policy_reference: filters.policy_reference,
    company_reference: filters.company_reference,
    request_id: filters.request_id,
    // A day picked in the form covers that whole day (London time is near enough for a filter).
    from: filters.from === '' ? undefined : new Date(`${filters.from}T00:00:00Z`).toISOString(),
    to: filters.to === '' ? undefined : new Date(`${filters.to}T23:59:59.999Z`).toISOString(),
    limit: 100,
    after,
  });

  useEffect(() => {
    let live = true;
    setLoading(true);
    api.get<Page<AuditRow>>('/admin/audit', { query: query(undefined) }).then(
      (page) => {
        if (!live) return;
        setRows([...page.data]);
        setCursor(page.next_cursor);
        setError(undefined);
        setLoading(false);
      },
      (caught: unknown) => {
        if (!live) return;
        setError(consoleError(caught));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [api, generation]);

  const more = () => {
    if (cursor === null) return;
    setLoading(true);
    api.get<Page<AuditRow>>('/admin/audit', { query: query(cursor) }).then(
      (page) => {
        setRows((earlier) => [...earlier, ...page.data]);
        setCursor(page.next_cursor);
        setLoading(false);
      },
      (caught: unknown) => {
        setError(consoleError(caught));
        setLoading(false);
      },
    );
  };

  const text = (fields: FormData, name: keyof Filters): string => {
    const value = fields.get(name);
    return typeof value === 'string' ? value.trim() : '';
  };

  return (
    <>
      <h1>Audit</h1>
      <form
        className="filters panel"
        aria-labelledby={`${id}-filters`}
        onSubmit={(event) => {
          event.preventDefault();
          const fields = new FormData(event.currentTarget);
          setFilters({
            actor: text(fields, 'actor'),
            policy_reference: text(fields, 'policy_reference'),
            company_reference: text(fields, 'company_reference'),
            request_id: text(fields, 'request_id'),
            from: text(fields, 'from'),
            to: text(fields, 'to'),
          });
          setGeneration((n) => n + 1);
        }}
      >
        <h2 id={`${id}-filters`}>Filters</h2>
        <div className="filter-grid">
          <Field label="Staff email (or admin-key)" name="actor" hint="Exact" />
          <Field label="Policy reference" name="policy_reference" />
          <Field label="Company reference" name="company_reference" />
          <Field label="Request id" name="request_id" />
          <Field label="From" name="from" type="date" />
          <Field label="To" name="to" type="date" />
        </div>
        <button type="submit" className="primary">
          Show
        </button>
      </form>
      {error !== undefined ? (
        <LoadFailed
          what="The audit records"
          error={error}
          onRetry={() => {
            setGeneration((n) => n + 1);
          }}
        />
      ) : null}
      {loading && rows.length === 0 ? <Loading what="audit records" /> : null}
      {!loading || rows.length > 0 ? <AuditGroups rows={rows} label="Audit records" /> : null}
      {cursor === null ? null : (
        <button type="button" className="secondary" onClick={more} disabled={loading}>
          {loading ? 'Loading…' : 'Show older'}
        </button>
      )}
    </>
  );
}
