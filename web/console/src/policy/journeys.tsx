import { useMemo, useState } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { formatMoney } from '../../../shared/format.ts';
import { loadPlaces } from '../../../shared/map/places.ts';
import { RouteMap } from '../../../shared/map/route-map.tsx';
import { useRoutePoints } from '../../../shared/map/route-points.ts';
import type { Journey } from '../api-types.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';
import { ActionButton } from './policy-actions.tsx';
import { eventMarkers } from './score-events.ts';

const NINETY_DAYS_SECONDS = 90 * 86_400;

const clock = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  dateStyle: 'medium',
  timeStyle: 'short',
});

/** When a journey started, in London: 14 Jun 2025, 09:00. */
export const journeyStart = (journey: Journey): string => clock.format(journey.start_at * 1000);

/** The policy's journeys of the last 90 days (from when the page opened). */
export function useJourneys(
  { tenant, policyReference, key }: PolicyScope,
  /** Bumped to load again after an action. */
  generation: number,
) {
  const { api } = useConsole();
  const from = useMemo(() => Math.floor(Date.now() / 1000) - NINETY_DAYS_SECONDS, []);
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/journeys', {
          params: { query: { policy_reference: policyReference, from, limit: 500 } },
        }),
      ),
    `${key}#${generation}`,
  );
}

/** The journeys, newest first, each with its route on a map and, unless void, a button to void it. */
export function JourneysPanel({ journeys }: { readonly journeys: ReturnType<typeof useJourneys> }) {
  return (
    <Panel title="Journeys (last 90 days)">
      <WhenLoaded load={journeys} what="journeys">
        {(page) =>
          page.journeys.length === 0 ? (
            <p className="empty">No journeys in the last 90 days.</p>
          ) : (
            <ul className="plain journeys">
              {[...page.journeys].reverse().map((journey) => (
                <JourneyRow key={journey.journey_reference} journey={journey} />
              ))}
            </ul>
          )
        }
      </WhenLoaded>
    </Panel>
  );
}

function JourneyRow({ journey }: { journey: Journey }) {
  const { config } = useConsole();
  const [open, setOpen] = useState(false);
  const points = useRoutePoints(journey.route, journey.precision);
  const start = journey.start_name ?? journey.start_postcode ?? 'Unknown place';
  const end = journey.end_name ?? journey.end_postcode ?? 'Unknown place';
  const distance =
    journey.distance_units === 'kms' ? `${journey.total_kms} km` : `${journey.total_miles} miles`;
  return (
    <li className={journey.is_void ? 'journey-row void' : 'journey-row'} data-testid="journey">
      <p>
        <strong>{journeyStart(journey)}</strong> {start} → {end}
      </p>
      <p className="hint">
        {distance} · {formatMoney(journey.usage_premium)} · {journey.source}
        {journey.score === null || journey.score === undefined ? '' : ` · score ${journey.score}`}
        {journey.is_void ? ` · void: ${journey.void_reason ?? 'no reason given'}` : ''}
      </p>
      <div className="actions">
        {points === undefined ? null : (
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            onClick={() => {
              setOpen(!open);
            }}
          >
            {open ? 'Hide route' : 'Show route'}
            <span className="visually-hidden">
              {' '}
              from {start} to {end}
            </span>
          </button>
        )}
        {journey.is_void ? null : <ActionButton label="Void" action={{ kind: 'void', journey }} />}
      </div>
      {open && points !== undefined ? (
        <RouteMap
          points={points}
          startName={start}
          endName={end}
          tileUrl={config.map_tile_url}
          places={loadPlaces}
          markers={eventMarkers(journey)}
        />
      ) : null}
    </li>
  );
}
