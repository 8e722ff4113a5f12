import { useEffect, useMemo, useState } from 'react';
import { unwrap, type components, type Session } from '../../../sdk/src/index.ts';
import { humanError } from './errors.ts';
import { formatDay, formatDistance, formatMoney, formatTime } from '../../shared/format.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { loadPlaces } from '../../shared/map/places.ts';
import { RouteMap } from '../../shared/map/route-map.tsx';
import { useRoutePoints } from '../../shared/map/route-points.ts';

type Journey = components['schemas']['Journey'];
type Unit = 'mile' | 'km';

/** How far back each load reaches: about a month, ending at a London midnight so days arrive whole. */
const WINDOW_SECONDS = 31 * 86_400;
/** The API's largest page of journeys. */
const PAGE_LIMIT = 500;
/** Statements per request when looking for capped days: each carries its journeys, so a few at a time. */
const STATEMENT_PAGE = 3;
const METRES_PER: Readonly<Record<Unit, number>> = { mile: 1609.344, km: 1000 };

const LONDON = 'Europe/London';
const dayParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: LONDON,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  hourCycle: 'h23',
});
/** The London calendar day of an instant, as `YYYY-MM-DD` (the form of a statement's `capped_days[].date`), and its hour. */
function londonDay(unixSeconds: number): { date: string; hour: number } {
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    dayParts.formatToParts(unixSeconds * 1000).find((p) => p.type === type)?.value ?? '';
  return { date: `${part('year')}-${part('month')}-${part('day')}`, hour: Number(part('hour')) };
}

/** The London midnight that starts the day holding `unixSeconds` (UNIX seconds). */
function londonMidnight(unixSeconds: number): number {
  const { date } = londonDay(unixSeconds);
  const utcMidnight =
    Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 1000;
  // NOTE: London is UTC or UTC+1, so its midnight is the UTC one or an hour before it (summer time).
  const summer = utcMidnight - 3600;
  return londonDay(summer).date === date && londonDay(summer).hour === 0 ? summer : utcMidnight;
}

/**
 * The policy's journeys, newest first, a month at a time (GET /journeys lists oldest first within a
 * time range), and the days its statements capped.
 */
function journeyFeed(session: Session, policyReference: string, startsAt: number) {
  let statementsBefore: string | null | undefined;
  let statementsFrom = Infinity;
  /** Pence credited for capped days, by statement then London date (a statement read twice counts once). */
  const credits = new Map<string, ReadonlyMap<string, number>>();

  const listRange = async (from: number, upTo: number | undefined): Promise<Journey[]> => {
    const found: Journey[] = [];
    let after: string | undefined;
    do {
      const page = await unwrap(
        session.client.GET('/journeys', {
          params: {
            query: {
              policy_reference: policyReference,
              from,
              limit: PAGE_LIMIT,
              ...(upTo === undefined ? {} : { to: upTo }),
              ...(after === undefined ? {} : { after }),
            },
          },
        }),
      );
      found.push(...page.journeys);
      after = page.next_cursor ?? undefined;
    } while (after !== undefined);
    return found;
  };

  return {
    /**
     * The month before `to` (UNIX seconds; undefined: up to now, with the odd journey a device clock put
     * ahead) that has journeys, passing over empty months, newest first; `done` at the policy's start.
     */
    async earlier(to: number | undefined): Promise<{ journeys: Journey[]; from: number; done: boolean }> {
      let upTo = to;
      for (;;) {
        const from = Math.max(
          startsAt,
          londonMidnight((upTo ?? Math.floor(Date.now() / 1000)) - WINDOW_SECONDS),
        );
        const journeys = await listRange(from, upTo);
        const done = from <= startsAt;
        if (journeys.length > 0 || done) return { journeys: journeys.reverse(), from, done };
        upTo = from - 1;
      }
    },
    /** Credits for capped days (pence by London date) from the statements reaching back to `from`. */
    async cappedDays(from: number): Promise<ReadonlyMap<string, number>> {
      while (statementsBefore !== null && statementsFrom > from) {
        const page = await unwrap(
          session.client.GET('/statements', {
            params: {
              query: {
                policy_reference: policyReference,
                limit: STATEMENT_PAGE,
                ...(statementsBefore === undefined ? {} : { before: statementsBefore }),
              },
            },
          }),
        );
        for (const statement of page.statements) {
          statementsFrom = Math.min(statementsFrom, Date.parse(statement.statement_start_date) / 1000);
          credits.set(
            statement.policy_version_reference,
            new Map(statement.capped_days.map((day) => [day.date, Math.round(day.credit * 100)])),
          );
        }
        statementsBefore = page.statements.length === 0 ? null : page.next_cursor;
      }
      const byDate = new Map<string, number>();
      for (const days of credits.values())
        for (const [date, pence] of days) byDate.set(date, (byDate.get(date) ?? 0) + pence);
      return byDate;
    },
  };
}

interface Day {
  readonly date: string;
  readonly journeys: readonly Journey[];
}

/** Journeys (newest first) by London day of their start, newest day first. */
function byDay(journeys: readonly Journey[]): Day[] {
  const days: Array<{ date: string; journeys: Journey[] }> = [];
  for (const journey of journeys) {
    const { date } = londonDay(journey.start_at);
    const last = days.at(-1);
    if (last?.date === date) last.journeys.push(journey);
    else days.push({ date, journeys: [journey] });
  }
  return days;
}

const placeName = (name: string | null, postcode: string | null): string =>
  name ?? postcode ?? 'an unnamed place';
const journeyDistance = (journey: Journey, unit: Unit): string =>
  formatDistance(unit === 'km' ? journey.total_kms : journey.total_miles, unit);

export function JourneysPage({ session, config }: PageProps) {
  const { policy, error: policyError } = usePolicy();
  const policyReference = policy?.policy_reference;
  const startsAt =
    policy === undefined ? undefined : (policy.policy.inception_date ?? policy.policy.start_date);
  const feed = useMemo(
    () =>
      policyReference === undefined || startsAt === undefined
        ? undefined
        : journeyFeed(session, policyReference, startsAt),
    [session, policyReference, startsAt],
  );
  const [journeys, setJourneys] = useState<readonly Journey[]>();
  const [capped, setCapped] = useState<ReadonlyMap<string, number>>(new Map());
  /** Where the shown journeys begin (UNIX seconds), and whether that is the policy's start. */
  const [reach, setReach] = useState<{ from: number; done: boolean }>();
  /** The load asked for: the month before `to` (undefined: the latest); a new object asks again. */
  const [wanted, setWanted] = useState<{ to: number | undefined }>({ to: undefined });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  useEffect(() => {
    if (feed === undefined) return;
    let live = true;
    setBusy(true);
    setError(undefined);
    const load = async () => {
      const page = await feed.earlier(wanted.to);
      return { page, cappedDays: await feed.cappedDays(page.from) };
    };
    load().then(
      ({ page, cappedDays }) => {
        if (!live) return;
        setJourneys((shown) =>
          wanted.to === undefined ? page.journeys : [...(shown ?? []), ...page.journeys],
        );
        setCapped(cappedDays);
        setReach({ from: page.from, done: page.done });
        setBusy(false);
      },
      (caught: unknown) => {
        if (!live) return;
        setError(humanError(caught));
        setBusy(false);
      },
    );
    return () => {
      live = false;
    };
  }, [feed, wanted]);

  const heading = <h1>Journeys</h1>;
  const shownError = policyError ?? error;
  if (policy === undefined || (journeys === undefined && shownError === undefined))
    return (
      <>
        {heading}
        {shownError === undefined ? (
          <p role="status">Loading your journeys…</p>
        ) : (
          <p className="message error" role="alert">
            {shownError}
          </p>
        )}
      </>
    );

  const unit: Unit = policy.product?.usage_unit ?? policy.pricing.usage_unit;
  const dailyCap = policy.product?.rules.daily_cap_distance;
  const days = byDay(journeys ?? []);
  return (
    <>
      {heading}
      {days.length === 0 && reach?.done === true ? (
        <p className="card">No journeys yet. Each journey appears here once your car’s device sends it.</p>
      ) : null}
      {days.map((day) => (
        <DayCard
          key={day.date}
          day={day}
          unit={unit}
          cappedCreditPence={capped.get(day.date)}
          dailyCap={dailyCap}
          tileUrl={config.map_tile_url}
        />
      ))}
      {shownError === undefined ? null : (
        <p className="message error" role="alert">
          {shownError}
        </p>
      )}
      {error !== undefined || reach?.done === false ? (
        // NOTE: kept (aria-disabled) while loading, so a keyboard user's focus stays on it.
        <button
          type="button"
          className="journeys-more"
          aria-disabled={busy}
          onClick={() => {
            if (!busy) setWanted({ to: error === undefined ? (reach?.from ?? 0) - 1 : wanted.to });
          }}
        >
          {busy ? 'Loading earlier journeys…' : error === undefined ? 'Show earlier journeys' : 'Try again'}
        </button>
      ) : null}
      <p className="visually-hidden" role="status">
        {busy && journeys !== undefined ? 'Loading earlier journeys…' : ''}
      </p>
    </>
  );
}

function DayCard({
  day,
  unit,
  cappedCreditPence,
  dailyCap,
  tileUrl,
}: {
  day: Day;
  unit: Unit;
  /** The credit a statement gave for this day being over the daily cap; undefined when none has. */
  cappedCreditPence: number | undefined;
  /** The product's daily cap in `unit`, if it has one. */
  dailyCap: number | undefined;
  tileUrl: string | null;
}) {
  const counted = day.journeys.filter((j) => !j.is_void);
  const metres = counted.reduce((sum, j) => sum + j.distance_in_metres, 0);
  // NOTE: the API gives no day totals; the day's cost is summed in whole pence, exactly as billed.
  const pence = counted.reduce((sum, j) => sum + Math.round(j.usage_premium * 100), 0);
  const unbilled = counted.every((j) => j.statement_version_reference === null);
  const overCap = dailyCap !== undefined && unbilled && metres / METRES_PER[unit] > dailyCap;
  const titleId = `day-${day.date}`;
  const count = day.journeys.length;
  return (
    <section className="card journey-day" aria-labelledby={titleId}>
      <h2 id={titleId}>{formatDay(`${day.date}T12:00:00Z`)}</h2>
      <p className="day-total">
        {count} {count === 1 ? 'journey' : 'journeys'}
        {count > counted.length ? `, ${count - counted.length} void` : ''} ·{' '}
        {formatDistance(metres / METRES_PER[unit], unit)} · {formatMoney(pence / 100)}
      </p>
      {cappedCreditPence !== undefined ? (
        <p className="journey-flag journey-flag-capped">
          Daily cap reached: {formatMoney(cappedCreditPence / 100)} credited on your statement
        </p>
      ) : overCap ? (
        <p className="journey-flag journey-flag-capped">
          Daily cap reached: you pay for at most {formatDistance(dailyCap, unit)} of this day
        </p>
      ) : null}
      <ul className="journey-list">
        {day.journeys.map((journey) => (
          <JourneyItem key={journey.journey_reference} journey={journey} unit={unit} tileUrl={tileUrl} />
        ))}
      </ul>
    </section>
  );
}

function JourneyItem({ journey, unit, tileUrl }: { journey: Journey; unit: Unit; tileUrl: string | null }) {
  const [open, setOpen] = useState(false);
  const points = useRoutePoints(journey.route, journey.precision);
  const start = placeName(journey.start_name, journey.start_postcode);
  const end = placeName(journey.end_name, journey.end_postcode);
  const time = formatTime(journey.start_at);
  const named = journey.start_name !== null || journey.end_name !== null || points !== undefined;
  const mapId = `route-${journey.journey_reference}`;
  return (
    <li className={journey.is_void ? 'journey journey-void' : 'journey'}>
      <div className="journey-summary">
        <span className="journey-time">{time}</span>
        <span className="journey-places">
          {named ? (
            <>
              {start} <span aria-hidden="true">→</span>
              <span className="visually-hidden">to</span> {end}
            </>
          ) : journey.source === 'odometer_reconciliation' ? (
            'Odometer adjustment'
          ) : (
            'Distance for the day'
          )}
        </span>
        <span className="journey-figures">
          <span>{journeyDistance(journey, unit)}</span> <span>{formatMoney(journey.usage_premium)}</span>
        </span>
      </div>
      {journey.is_void || journey.is_estimated ? (
        <p className="journey-flags">
          {journey.is_void ? (
            <span className="journey-flag journey-flag-void">Void — not charged</span>
          ) : null}
          {journey.is_estimated ? (
            <span className="journey-flag journey-flag-estimated">Estimated — device offline</span>
          ) : null}
        </p>
      ) : null}
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
            {open ? 'Hide route' : 'Show route'}
            <span className="visually-hidden">
              {' '}
              of the {time} journey from {start} to {end}
            </span>
          </button>
          <div id={mapId} hidden={!open}>
            {open ? (
              <RouteMap
                points={points}
                startName={start}
                endName={end}
                tileUrl={tileUrl}
                unit={unit}
                places={loadPlaces}
              />
            ) : null}
          </div>
        </>
      )}
    </li>
  );
}
