import { useCallback, useId, useMemo, useState, type SyntheticEvent } from 'react';
import type { components, Session } from '../../../sdk/src/index.ts';
import { formatDay, formatTime } from '../../shared/format.ts';
import { loadPlaces } from '../../shared/map/places.ts';
import { RouteMap, type MapMarker } from '../../shared/map/route-map.tsx';
import { useRoutePoints } from '../../shared/map/route-points.ts';
import {
  DETAILS_MAX_CHARS,
  KIND_NAMES,
  REASON_NAMES,
  scoreDisputes,
  STATE_NAMES,
  type DisputeReason,
  type DisputeSummary,
  type ScoreEvent,
} from '../../shared/score-disputes.ts';
import { humanError } from './errors.ts';

type Journey = components['schemas']['Journey'];

/** An event's figures in words: "08:12 · 31.2 mph · 0.41 g", "for 18 s". */
function eventFigures(event: ScoreEvent): string {
  const parts = [formatTime(event.occurred_at), `${event.speed_mph.toFixed(1)} mph`];
  if (event.acceleration_g !== null) parts.push(`${event.acceleration_g.toFixed(2)} g`);
  if (event.duration_seconds !== null)
    parts.push(
      event.duration_seconds >= 120
        ? `for ${Math.round(event.duration_seconds / 60)} min`
        : `for ${event.duration_seconds} s`,
    );
  return parts.join(' · ');
}

const eventId = (event: ScoreEvent): string => `event-${event.event_reference}`;

/** A scored trip: its score, its events listed and numbered, and on its route map the same numbers. */
export function ScoredTrip(props: {
  readonly journey: Journey;
  readonly session: Session;
  readonly policyReference: string;
  readonly tileUrl: string | null;
}) {
  const { journey, session, policyReference, tileUrl } = props;
  const events: readonly ScoreEvent[] = journey.events ?? [];
  const [open, setOpen] = useState(false);
  const points = useRoutePoints(journey.route, journey.precision);
  const start = journey.start_name ?? journey.start_postcode ?? 'an unnamed place';
  const end = journey.end_name ?? journey.end_postcode ?? 'an unnamed place';
  const when = `${formatDay(journey.start_at)}, ${formatTime(journey.start_at)}`;
  const markers: MapMarker[] = useMemo(
    () =>
      events.map((event, index) => ({
        key: event.event_reference,
        lat: event.lat,
        lng: event.lng,
        label: String(index + 1),
        name: `Event ${index + 1}: ${KIND_NAMES[event.kind]}, ${eventFigures(event)}`,
      })),
    [events],
  );
  // A marker pressed on the map takes the reader to its event in the list.
  const showEvent = useCallback((key: string) => {
    document.getElementById(`event-${key}`)?.focus();
  }, []);
  const titleId = `trip-${journey.journey_reference}`;
  const mapId = `trip-map-${journey.journey_reference}`;
  return (
    <section className="card scored-trip" aria-labelledby={titleId}>
      <h3 id={titleId}>
        {when}: {start} <span aria-hidden="true">→</span>
        <span className="visually-hidden">to</span> {end}
      </h3>
      <p className="trip-score">
        Trip score{' '}
        <strong>{journey.score === null || journey.score === undefined ? '—' : journey.score}</strong>
        {' · '}
        {events.length === 1 ? '1 event' : `${events.length} events`}
      </p>
      {points === undefined ? null : (
        <>
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            aria-controls={mapId}
            onClick={() => {
              setOpen((was) => !was);
            }}
          >
            {open ? 'Hide the map' : 'Show the events on the map'}
            <span className="visually-hidden">
              {' '}
              of the trip from {start} to {end}
            </span>
          </button>
          <div id={mapId} hidden={!open}>
            {open ? (
              <RouteMap
                points={points}
                startName={start}
                endName={end}
                tileUrl={tileUrl}
                places={loadPlaces}
                markers={markers}
                onMarker={showEvent}
              />
            ) : null}
          </div>
        </>
      )}
      <ol className="score-events">
        {events.map((event, index) => (
          <EventItem
            key={event.event_reference}
            event={event}
            number={index + 1}
            session={session}
            policyReference={policyReference}
          />
        ))}
      </ol>
    </section>
  );
}

function EventItem(props: {
  readonly event: ScoreEvent;
  readonly number: number;
  readonly session: Session;
  readonly policyReference: string;
}) {
  const { event, number, session, policyReference } = props;
  const [dispute, setDispute] = useState<DisputeSummary | null>(event.dispute ?? null);
  const [disputing, setDisputing] = useState(false);
  return (
    <li id={eventId(event)} tabIndex={-1} className="score-event">
      <p>
        <span className="event-number" aria-hidden="true">
          {number}
        </span>{' '}
        <strong>{KIND_NAMES[event.kind]}</strong> · {eventFigures(event)}
      </p>
      {dispute !== null ? (
        <p className={`dispute-state dispute-${dispute.state}`} role="status">
          {STATE_NAMES[dispute.state]}
        </p>
      ) : disputing ? (
        <DisputeForm
          event={event}
          session={session}
          policyReference={policyReference}
          onDone={(made) => {
            setDispute(made);
            setDisputing(false);
          }}
          onCancel={() => {
            setDisputing(false);
          }}
        />
      ) : (
        <button
          type="button"
          className="link-button"
          onClick={() => {
            setDisputing(true);
          }}
        >
          Dispute this event
          <span className="visually-hidden">
            {' '}
            ({KIND_NAMES[event.kind]} at {formatTime(event.occurred_at)})
          </span>
        </button>
      )}
    </li>
  );
}

function DisputeForm(props: {
  readonly event: ScoreEvent;
  readonly session: Session;
  readonly policyReference: string;
  readonly onDone: (dispute: DisputeSummary) => void;
  readonly onCancel: () => void;
}) {
  const { event, session, policyReference, onDone, onCancel } = props;
  const id = useId();
  const [reason, setReason] = useState<DisputeReason>('passenger');
  const [details, setDetails] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const detailsRequired = reason === 'other';

  const submit = (submitted: SyntheticEvent<HTMLFormElement>) => {
    submitted.preventDefault();
    if (busy) return;
    const text = details.trim();
    if (detailsRequired && text === '') {
      setError('Please say what happened.');
      return;
    }
    setBusy(true);
    setError(undefined);
    scoreDisputes(session.client)
      .raise(policyReference, event.event_reference, reason, text)
      .then(
        (made) => {
          onDone({ dispute_reference: made.dispute_reference, state: made.state });
        },
        (caught: unknown) => {
          setError(humanError(caught));
          setBusy(false);
        },
      );
  };

  return (
    <form className="dispute-form" onSubmit={submit} noValidate>
      <fieldset className="choice">
        <legend>Why should this {KIND_NAMES[event.kind].toLowerCase()} not count?</legend>
        {(Object.keys(REASON_NAMES) as DisputeReason[]).map((value) => (
          <label key={value}>
            <input
              type="radio"
              name={`${id}-reason`}
              value={value}
              checked={reason === value}
              onChange={() => {
                setReason(value);
              }}
            />{' '}
            {REASON_NAMES[value]}
          </label>
        ))}
      </fieldset>
      <label htmlFor={`${id}-details`}>What happened{detailsRequired ? '' : ' (optional)'}</label>
      <textarea
        id={`${id}-details`}
        value={details}
        maxLength={DETAILS_MAX_CHARS}
        rows={3}
        required={detailsRequired}
        aria-invalid={error !== undefined && detailsRequired && details.trim() === ''}
        onChange={(changed) => {
          setDetails(changed.target.value);
        }}
      />
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={busy}>
          {busy ? 'Sending…' : 'Send the dispute'}
        </button>
        <button type="button" className="link-button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
