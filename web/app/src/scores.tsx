import { useEffect, useState } from 'react';
import { unwrap, type components, type Session } from '../../../sdk/src/index.ts';
import { DEFAULT_WEIGHTS } from '../../shared/score-disputes.ts';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { formatMonth, ScoreTrend } from './score-trend.tsx';
import { ScoredTrip } from './score-trip.tsx';

type Journey = components['schemas']['Journey'];
type Months = components['schemas']['PolicyScores']['months'];
type Weights = { -readonly [K in keyof typeof DEFAULT_WEIGHTS]: number };

/** How far back the trips with events reach: about a month. */
const EVENTS_WINDOW_SECONDS = 31 * 86_400;
/** The API's largest page of journeys. */
const PAGE_LIMIT = 500;
/** Miles of scored trips before a month's score is final (docs/api.md, "Driving scores"). */
const FINAL_MILES = 50;

/** The policy's scored months (the 12 to this one) and its trips of the last month that have events, newest first. */
async function loadScores(session: Session, policyReference: string) {
  const scores = await unwrap(
    session.client.GET('/policys/{policy_reference}/scores', {
      params: { path: { policy_reference: policyReference } },
    }),
  );
  const from = Math.floor(Date.now() / 1000) - EVENTS_WINDOW_SECONDS;
  const trips: Journey[] = [];
  let after: string | undefined;
  do {
    const page = await unwrap(
      session.client.GET('/journeys', {
        params: {
          query: {
            policy_reference: policyReference,
            from,
            limit: PAGE_LIMIT,
            ...(after === undefined ? {} : { after }),
          },
        },
      }),
    );
    trips.push(...page.journeys.filter((j) => !j.is_void && (j.events ?? []).length > 0));
    after = page.next_cursor ?? undefined;
  } while (after !== undefined);
  return { months: scores.months, trips: trips.reverse() };
}

export function ScoresPage({ session, config }: PageProps) {
  const { policy, error: policyError } = usePolicy();
  const policyReference = policy?.policy_reference;
  const [loaded, setLoaded] = useState<{ months: Months; trips: Journey[] }>();
  const [error, setError] = useState<string>();
  // The demo's sample account has no scored trips: the service's mock environment does not answer scores.
  const demo = config.environment === 'mock';
  useEffect(() => {
    if (policyReference === undefined || demo) return;
    let live = true;
    loadScores(session, policyReference).then(
      (answer) => {
        if (live) setLoaded(answer);
      },
      (caught: unknown) => {
        if (live) setError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, policyReference, demo]);

  const heading = <h1>Driving score</h1>;
  if (demo)
    return (
      <>
        {heading}
        <p className="card">
          The demo has no driving scores. Signed in to a policy with a telematics device, this page shows the
          month’s score, its trend and each harsh event on its trip’s map.
        </p>
      </>
    );
  const shownError = policyError ?? error;
  if (shownError !== undefined)
    return (
      <>
        {heading}
        <p className="message error" role="alert">
          {shownError}
        </p>
      </>
    );
  if (policy === undefined || loaded === undefined)
    return (
      <>
        {heading}
        <p role="status">Loading your driving score…</p>
      </>
    );
  const rules = policy.product?.rules.driving_score;
  const weights: Weights = { ...DEFAULT_WEIGHTS, ...rules?.weights };
  const speeding = { mph: rules?.speeding_above_mph ?? 79, seconds: rules?.speeding_min_seconds ?? 15 };
  const thisMonth = loaded.months.at(-1);
  return (
    <>
      {heading}
      <section className="card" aria-labelledby="score-now">
        <h2 id="score-now">{thisMonth === undefined ? 'This month' : formatMonth(thisMonth.month)}</h2>
        <MonthScore month={thisMonth} />
      </section>
      <section className="card" aria-labelledby="score-trend">
        <h2 id="score-trend">Your score over the months</h2>
        <ScoreTrend months={loaded.months} />
      </section>
      <section className="card" aria-labelledby="score-lowers">
        <h2 id="score-lowers">What lowers your score</h2>
        <WeightsInWords weights={weights} speeding={speeding} />
      </section>
      <section aria-labelledby="score-events">
        <h2 id="score-events">Events on your trips</h2>
        {loaded.trips.length === 0 ? (
          <p className="card">No events on your trips in the last month.</p>
        ) : (
          loaded.trips.map((journey) => (
            <ScoredTrip
              key={journey.journey_reference}
              journey={journey}
              session={session}
              policyReference={policy.policy_reference}
              tileUrl={config.map_tile_url}
            />
          ))
        )}
      </section>
    </>
  );
}

function MonthScore({ month }: { readonly month: Months[number] | undefined }) {
  if (month?.score === null || month === undefined)
    return (
      <p>No scored trips yet this month. Trips of a mile or more are scored once your device sends them.</p>
    );
  // The back end adds `disputed` to months once it records disputes (docs/api.md, "Driving scores").
  const disputed = (month as { disputed?: boolean }).disputed === true;
  return (
    <>
      <p className="score-figure" data-testid="month-score">
        <strong>{month.score.toFixed(1)}</strong> out of 100
      </p>
      <p>
        {month.distance_miles.toFixed(1)} miles over {month.scored_trips}{' '}
        {month.scored_trips === 1 ? 'scored trip' : 'scored trips'}.
      </p>
      {month.provisional ? (
        <p className="journey-flag journey-flag-estimated" data-testid="provisional">
          Provisional:{' '}
          {month.closed
            ? `fewer than ${FINAL_MILES} miles were scored this month.`
            : `it can change until the month is over and ${FINAL_MILES} miles are scored.`}
        </p>
      ) : null}
      {disputed ? (
        <p className="journey-flag">A dispute about an event this month is waiting for a decision.</p>
      ) : null}
    </>
  );
}

interface Speeding {
  readonly mph: number;
  readonly seconds: number;
}

const sentences = (speeding: Speeding): ReadonlyArray<[keyof Weights, string]> => [
  ['harsh_braking', 'Each harsh brake (slowing by about 7 mph or more in a second)'],
  ['rapid_acceleration', 'Each rapid acceleration (speeding up as sharply)'],
  ['harsh_cornering', 'Each harsh turn (taking a corner fast enough to push you sideways)'],
  ['speeding', `Each spell above ${speeding.mph} mph lasting ${speeding.seconds} seconds or more`],
  ['fatigue', 'Each stretch of more than 2 hours’ driving without a 20-minute break'],
  ['night_driving', 'Each mile driven between midnight and 4 am'],
];

const points = (n: number): string => `${n} ${n === 1 ? 'point' : 'points'}`;

/** The product's weights in words: what each event takes off a score of 100, per 100 miles driven. */
function WeightsInWords({ weights, speeding }: { readonly weights: Weights; readonly speeding: Speeding }) {
  return (
    <>
      <p>
        Every trip of a mile or more starts at 100. What is taken off depends on how often things happen for
        the distance you drive, so a long trip with one harsh brake loses less than a short one.
      </p>
      <ul className="score-weights">
        {sentences(speeding)
          .filter(([kind]) => weights[kind] > 0)
          .map(([kind, sentence]) => (
            <li key={kind}>
              {sentence} takes <strong>{points(weights[kind])}</strong> off for every 100 miles you drive.
            </li>
          ))}
      </ul>
      <p className="hint">
        A month’s score is the average of its trips’ scores, longer trips counting for more. If an event was
        not your driving, you can dispute it below.
      </p>
    </>
  );
}
