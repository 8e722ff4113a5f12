import { unwrap } from '../../../../sdk/src/client.ts';
import { KIND_NAMES, STATE_NAMES, type ScoreEvent } from '../../../shared/score-disputes.ts';
import type { Journey } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { DataTable, type Column } from '../data-table.tsx';
import { journeyStart, type useJourneys } from './journeys.tsx';
import { eventClock, eventFigures } from './score-events.ts';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

const monthName = new Intl.DateTimeFormat('en-GB', { month: 'short', year: 'numeric', timeZone: 'UTC' });

/** The policy's driving scores, the 12 months to this one (GET /policys/{ref}/scores). */
export function useScores({ tenant, policyReference, key }: PolicyScope) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/policys/{policy_reference}/scores', {
          params: { path: { policy_reference: policyReference } },
        }),
      ),
    key,
  );
}

type Month = NonNullable<ReturnType<typeof useScores>['data']>['months'][number] & { disputed?: boolean };

const MONTH_COLUMNS: readonly Column<Month>[] = [
  { header: 'Month', nowrap: true, cell: (m) => monthName.format(new Date(`${m.month}-01T12:00:00Z`)) },
  { header: 'Score', number: true, cell: (m) => (m.score === null ? '—' : m.score.toFixed(1)) },
  { header: 'Miles', number: true, cell: (m) => m.distance_miles.toFixed(1) },
  { header: 'Trips', number: true, cell: (m) => m.scored_trips },
  {
    header: 'Status',
    cell: (m) =>
      [m.provisional ? 'provisional' : 'final', m.closed ? 'closed' : 'open', m.disputed ? 'disputed' : '']
        .filter((word) => word !== '')
        .join(', '),
  },
];

interface EventRow {
  readonly journey: Journey;
  readonly event: ScoreEvent;
}

const EVENT_COLUMNS: readonly Column<EventRow>[] = [
  { header: 'When', nowrap: true, cell: ({ event }) => eventClock.format(Date.parse(event.occurred_at)) },
  { header: 'Event', cell: ({ event }) => KIND_NAMES[event.kind] },
  { header: 'Figures', nowrap: true, cell: ({ event }) => eventFigures(event) },
  {
    header: 'Journey',
    cell: ({ journey }) =>
      `${journeyStart(journey)}, score ${journey.score === null || journey.score === undefined ? '—' : journey.score}`,
  },
  {
    header: 'Dispute',
    cell: ({ event }) => (event.dispute == null ? '—' : STATE_NAMES[event.dispute.state]),
  },
];

/** The months' scores and the events of the journeys shown below (the last 90 days), newest first. */
export function ScoresPanel(props: {
  readonly scores: ReturnType<typeof useScores>;
  readonly journeys: ReturnType<typeof useJourneys>;
}) {
  return (
    <Panel title="Driving scores">
      <WhenLoaded load={props.scores} what="driving scores">
        {(scores) =>
          scores.months.every((m) => m.scored_trips === 0) ? (
            <p className="empty">No scored trips in the last 12 months.</p>
          ) : (
            <>
              <DataTable
                label="Driving score by month"
                columns={MONTH_COLUMNS}
                rows={(scores.months as Month[]).filter((m) => m.scored_trips > 0).reverse()}
                rowKey={(m) => m.month}
              />
              <p className="hint">
                The last 12 months, newest first; months without a scored trip are left out.
              </p>
            </>
          )
        }
      </WhenLoaded>
      <h3>Events (last 90 days)</h3>
      <WhenLoaded load={props.journeys} what="journeys">
        {(page) => {
          const rows = page.journeys
            .filter((journey) => !journey.is_void)
            .flatMap((journey) => (journey.events ?? []).map((event) => ({ journey, event })))
            .reverse();
          return rows.length === 0 ? (
            <p className="empty">No driving events in the last 90 days.</p>
          ) : (
            <DataTable
              label="Driving events"
              columns={EVENT_COLUMNS}
              rows={rows}
              rowKey={(row) => row.event.event_reference}
            />
          );
        }}
      </WhenLoaded>
    </Panel>
  );
}
