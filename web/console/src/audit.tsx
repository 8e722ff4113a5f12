import { useEffect, useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { consoleError, type ConsoleApi } from './api.ts';
import type { AuditRow } from './api-types.ts';
import { useConsole } from './console-context.tsx';
import { Field, Loading } from './ui.tsx';

interface AuditGroup {
  readonly requestId: string;
  readonly first: AuditRow;
  readonly rows: readonly AuditRow[];
}

/** The rows of one action share its request id: one group each, in the order they came. */
export function groupByRequest(rows: readonly AuditRow[]): AuditGroup[] {
  const groups = new Map<string, { first: AuditRow; rows: AuditRow[] }>();
  for (const row of rows) {
    const group = groups.get(row.request_id);
    if (group === undefined) groups.set(row.request_id, { first: row, rows: [row] });
    else group.rows.push(row);
  }
  return [...groups].map(([requestId, group]) => ({ requestId, ...group }));
}

const show = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/**
 * A row's fields before or after (null when there were none). NOTE: the OpenAPI document leaves their
 * type open (any JSON); the service sends an object of column values, or null.
 */
const fieldsOf = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : {};

/** The columns a row's change touched: every column of an insert or delete, the changed ones of an update. */
function changedFields(row: AuditRow): Array<{ name: string; before: unknown; after: unknown }> {
  const before = fieldsOf(row.before);
  const after = fieldsOf(row.after);
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return names
    .filter(
      (name) => row.operation !== 'update' || JSON.stringify(before[name]) !== JSON.stringify(after[name]),
    )
    .map((name) => ({ name, before: before[name], after: after[name] }));
}

const actorName = (actor: string): string => actor.replace(/^staff:/, '');

const OUTCOME_LABEL = { ok: 'done', denied: 'denied', failed: 'failed' } as const;

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
                {OUTCOME_LABEL[first.outcome]}
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
                    <li key={row.id}>
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

/** A page of the audit trail for the filters (those left empty filter nothing), after `after`. */
function auditPage(api: ConsoleApi, filters: Filters, after: string | undefined) {
  const { actor, policy_reference, company_reference, request_id, from, to } = filters;
  return unwrap(
    api.client.GET('/admin/audit', {
      params: {
        query: {
          ...(actor === '' ? {} : { actor: actor.includes(':') ? actor : `staff:${actor}` }),
          ...(policy_reference === '' ? {} : { policy_reference }),
          ...(company_reference === '' ? {} : { company_reference }),
          ...(request_id === '' ? {} : { request_id }),
          // A day picked in the form covers that whole day (London time is near enough for a filter).
          ...(from === '' ? {} : { from: new Date(`${from}T00:00:00Z`).toISOString() }),
          ...(to === '' ? {} : { to: new Date(`${to}T23:59:59.999Z`).toISOString() }),
          limit: 100,
          ...(after === undefined ? {} : { after }),
        },
      },
    }),
  );
}

/** Everything staff and the admin key did, newest first, filtered by who, when and what. */
export function AuditPage() {
  const { api } = useConsole();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<AuditRow[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let live = true;
    setLoading(true);
    auditPage(api, filters, undefined).then(
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
    auditPage(api, filters, cursor).then(
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

  return (
    <>
      <h1>Audit</h1>
      <AuditFilters
        onShow={(chosen) => {
          setFilters(chosen);
          setGeneration((n) => n + 1);
        }}
      />
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

function AuditFilters({ onShow }: { onShow: (filters: Filters) => void }) {
  const id = useId();
  const text = (fields: FormData, name: keyof Filters): string => {
    const value = fields.get(name);
    return typeof value === 'string' ? value.trim() : '';
  };
  return (
    <form
      className="filters panel"
      aria-labelledby={`${id}-filters`}
      onSubmit={(event) => {
        event.preventDefault();
        const fields = new FormData(event.currentTarget);
        onShow({
          actor: text(fields, 'actor'),
          policy_reference: text(fields, 'policy_reference'),
          company_reference: text(fields, 'company_reference'),
          request_id: text(fields, 'request_id'),
          from: text(fields, 'from'),
          to: text(fields, 'to'),
        });
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
  );
}
