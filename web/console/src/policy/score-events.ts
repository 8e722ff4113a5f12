import type { MapMarker } from '../../../shared/map/route-map.tsx';
import { KIND_NAMES, type ScoreEvent } from '../../../shared/score-disputes.ts';
import type { Journey } from '../api-types.ts';

/** When an event happened, in London, to the second: 14 Jun 2025, 09:00:12. */
export const eventClock = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  dateStyle: 'medium',
  timeStyle: 'medium',
});

/** An event's figures: "31.2 mph · 0.41 g · 18 s". */
export function eventFigures(event: ScoreEvent): string {
  return [
    `${event.speed_mph.toFixed(1)} mph`,
    event.acceleration_g === null ? '' : `${event.acceleration_g.toFixed(2)} g`,
    event.duration_seconds === null ? '' : `${event.duration_seconds} s`,
  ]
    .filter((part) => part !== '')
    .join(' · ');
}

/** A journey's events as numbered markers for its route map. */
export const eventMarkers = (journey: Journey): MapMarker[] =>
  (journey.events ?? []).map((event, index) => ({
    key: event.event_reference,
    lat: event.lat,
    lng: event.lng,
    label: String(index + 1),
    name: `Event ${index + 1}: ${KIND_NAMES[event.kind]}, ${eventClock.format(Date.parse(event.occurred_at))}, ${eventFigures(event)}`,
  }));
