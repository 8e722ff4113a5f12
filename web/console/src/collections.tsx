import { useId, useState } from 'react';
import { formatDay, formatMoney } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import type { Tenant } from './api-types.ts';
import { useConsole, useLoad } from './console-context.tsx';
import { CollectionStatus, DataTable, FailureCell, type Column } from './data-table.tsx';
import {
  loadCollections,
  type CalendarCollection,
  type CalendarDay,
  type StateTotal,
} from './direct-debit-api.ts';
import { followLink, hrefOf } from './router.ts';
import { ForTenant, Loading } from './ui.tsx';

/*
 * The Direct Debit collections calendar: a month of the company's collections, listed by the day they
 * are (or were) collected on, each day with what will be collected, what is processing at the bank and
 * what failed (with why). A list by day rather than a grid of weeks: it reads in order on a phone and
 * to a screen reader, and an empty day takes no room.
 */

/** Today's month in London, as YYYY-MM. */
function londonMonth(now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London', year: 'numeric', month: '2-digit' })
    .format(now)
    .slice(0, 7);
}

/** The month `delta` months from `month` (YYYY-MM). */
function shiftMonth(month: string, delta: number): string {
  const [year = 0, index = 1] = month.split('-').map(Number);
  const next = new Date(Date.UTC(year, index - 1 + delta, 1));
  return `${next.getUTCFullYear()}-${String(next.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month's first and last days, inclusive: [YYYY-MM-01, YYYY-MM-28…31]. */
function monthDays(month: string): { from: string; to: string } {
  const [year = 0, index = 1] = month.split('-').map(Number);
  const last = new Date(Date.UTC(year, index, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(last).padStart(2, '0')}` };
}

const monthName = (month: string): string =>
  new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    new Date(`${month}-01T00:00:00Z`),
  );

export function CollectionsPage() {
  return (
    <>
      <h1>Collections</h1>
      <ForTenant>{(tenant) => <Collections tenant={tenant} />}</ForTenant>
    </>
  );
}

function Collections({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const [month, setMonth] = useState(() => londonMonth(new Date()));
  const headingId = useId();
  const { from, to } = monthDays(month);
  const tenantKey = `${tenant.company.company_reference}/${tenant.environment}`;
  const collections = useLoad(() => loadCollections(api.client, tenant, from, to), `${tenantKey}/${month}`);
  return (
    <section aria-labelledby={headingId}>
      <div className="month-picker">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setMonth(shiftMonth(month, -1));
          }}
        >
          Previous month
        </button>
        <h2 id={headingId} aria-live="polite">
          {monthName(month)}
        </h2>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setMonth(shiftMonth(month, 1));
          }}
        >
          Next month
        </button>
      </div>
      {collections.error !== undefined ? (
        <LoadFailed what="The collections" error={collections.error} onRetry={collections.reload} />
      ) : collections.data === undefined || collections.loading ? (
        <Loading what="collections" />
      ) : collections.data.every((day) => day.collections.length === 0) ? (
        <p className="empty" role="status">
          No Direct Debit collections for {tenant.company.name} in {tenant.environment} in {monthName(month)}.
        </p>
      ) : (
        <>
          <MonthTotals days={collections.data} />
          {collections.data
            .filter((day) => day.collections.length > 0)
            .map((day) => (
              <CollectionDay key={day.day} day={day} tenant={tenant} />
            ))}
        </>
      )}
    </section>
  );
}

type TotalState = 'scheduled' | 'processing' | 'paid' | 'failed';

const STATES: ReadonlyArray<{ readonly state: TotalState; readonly label: string }> = [
  { state: 'scheduled', label: 'To collect' },
  { state: 'processing', label: 'Processing' },
  { state: 'paid', label: 'Paid' },
  { state: 'failed', label: 'Failed' },
];

/** Per state: how many collections and how much, for a day or the month. */
function Totals({ totals }: { readonly totals: Readonly<Record<TotalState, StateTotal>> }) {
  return (
    <dl className="collection-totals">
      {STATES.map(({ state, label }) => (
        <div key={state}>
          <dt>{label}</dt>
          <dd>
            {totals[state].count} · {formatMoney(totals[state].amount)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The days' totals added up: counts, and amounts in pence so that no binary fraction creeps in. */
function monthTotals(days: readonly CalendarDay[]): Record<TotalState, StateTotal> {
  const sum = (state: TotalState): StateTotal => {
    let count = 0;
    let pence = 0;
    for (const day of days) {
      count += day[state].count;
      pence += Math.round(day[state].amount * 100);
    }
    return { count, amount: pence / 100 };
  };
  return {
    scheduled: sum('scheduled'),
    processing: sum('processing'),
    paid: sum('paid'),
    failed: sum('failed'),
  };
}

function MonthTotals({ days }: { readonly days: readonly CalendarDay[] }) {
  return (
    <div className="panel" data-testid="month-totals">
      <h3>The month</h3>
      <Totals totals={monthTotals(days)} />
    </div>
  );
}

function CollectionDay(props: { readonly day: CalendarDay; readonly tenant: Tenant }) {
  const id = useId();
  const { tenant } = props;
  const columns: readonly Column<CalendarCollection>[] = [
    {
      header: 'Policy',
      cell: (collection) => {
        const target = {
          page: 'policy',
          companyReference: tenant.company.company_reference,
          environment: tenant.environment,
          policyReference: collection.policyReference,
        } as const;
        return (
          <a
            href={hrefOf(target)}
            onClick={(event) => {
              followLink(event, target);
            }}
          >
            {collection.policyReference}
          </a>
        );
      },
    },
    { header: 'Amount', number: true, cell: (collection) => formatMoney(collection.amount) },
    { header: 'State', cell: (collection) => <CollectionStatus status={collection.status} /> },
    {
      header: 'Failure',
      cell: (collection) => <FailureCell code={collection.failureCode} message={collection.failureMessage} />,
    },
    { header: 'Mandate', cell: (collection) => collection.mandateReference ?? '—' },
  ];
  return (
    <section className="panel collection-day" aria-labelledby={id} data-testid="collection-day">
      <h3 id={id}>{formatDay(props.day.day)}</h3>
      <Totals totals={props.day} />
      <DataTable
        label={`Collections on ${formatDay(props.day.day)}`}
        columns={columns}
        rows={props.day.collections}
        rowKey={(collection) => collection.reference}
      />
    </section>
  );
}
