import { useEffect, useId, useState, type SyntheticEvent } from 'react';
import {
  MilepostError,
  unwrap,
  type components,
  type PolicyDetails,
  type Session,
} from '../../../sdk/src/index.ts';
import { LoadFailed } from './messages.tsx';
import { humanError } from './errors.ts';
import { formatDate, formatDistance, formatMoney } from './format.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { BarChart, ChartLegend, FiguresTable, type ChartBar } from './usage-chart.tsx';

type Journey = components['schemas']['Journey'];
type Budget = components['schemas']['MileageBudget'];
type Unit = 'mile' | 'km';
type Measure = 'distance' | 'cost';

const METRES_PER: Readonly<Record<Unit, number>> = { mile: 1609.344, km: 1000 };
/** The API's page limit for journeys. */
const PAGE_SIZE = 500;
/** The service's largest budget (usage-schemas.ts). */
const BUDGET_MAX = 1_000_000;

// ── London calendar ───────────────────────────────────────────────────────────────────────────────

const londonParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});
/** The Europe/London calendar day of an instant, `YYYY-MM-DD` (journeys count on the day they start). */
function londonDay(unixSeconds: number): string {
  const parts = Object.fromEntries(
    londonParts.formatToParts(new Date(unixSeconds * 1000)).map((p) => [p.type, p.value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']}`;
}
const monthOf = (day: string): string => day.slice(0, 7);
/** Calendar arithmetic on `YYYY-MM-DD` through UTC dates, where no day is 23 or 25 hours long. */
const utcOf = (day: string): Date => new Date(`${day}T00:00:00Z`);
const dayOf = (date: Date): string => date.toISOString().slice(0, 10);

function daysBetween(first: string, last: string): string[] {
  const days: string[] = [];
  for (let d = utcOf(first); dayOf(d) <= last; d = new Date(d.getTime() + 86_400_000)) days.push(dayOf(d));
  return days;
}
function monthsBetween(first: string, last: string): string[] {
  const months: string[] = [];
  for (let d = utcOf(`${first}-01`); monthOf(dayOf(d)) <= last; d.setUTCMonth(d.getUTCMonth() + 1))
    months.push(monthOf(dayOf(d)));
  return months;
}
const daysInMonth = (month: string): number => {
  const d = utcOf(`${month}-01`);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
};
const shortMonth = new Intl.DateTimeFormat('en-GB', { month: 'short', timeZone: 'UTC' });
const longMonth = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });

// ── Sums ──────────────────────────────────────────────────────────────────────────────────────────

/** Distance and money of a set of journeys, in whole units: metres and pence (never summed pounds). */
interface Totals {
  distanceMetres: number;
  premiumPence: number;
  journeys: number;
  estimated: number;
}
const emptyTotals = (): Totals => ({ distanceMetres: 0, premiumPence: 0, journeys: 0, estimated: 0 });
function add(totals: Totals, journey: Journey): void {
  totals.distanceMetres += journey.distance_in_metres;
  // Each journey's premium is whole pence in pounds; rounding it back to pence keeps the sum exact.
  totals.premiumPence += Math.round(journey.usage_premium * 100);
  totals.journeys += 1;
  if (journey.is_estimated) totals.estimated += 1;
}
/** Non-void journeys summed by a key of their start (a London day or month). */
function sumBy(journeys: readonly Journey[], keyOf: (journey: Journey) => string): Map<string, Totals> {
  const sums = new Map<string, Totals>();
  for (const journey of journeys) {
    if (journey.is_void) continue;
    const key = keyOf(journey);
    const totals = sums.get(key) ?? emptyTotals();
    add(totals, journey);
    sums.set(key, totals);
  }
  return sums;
}
function total(sums: Map<string, Totals>, keys: readonly string[]): Totals {
  const all = emptyTotals();
  for (const key of keys) {
    const part = sums.get(key);
    if (part === undefined) continue;
    all.distanceMetres += part.distanceMetres;
    all.premiumPence += part.premiumPence;
    all.journeys += part.journeys;
    all.estimated += part.estimated;
  }
  return all;
}

// ── Loading ───────────────────────────────────────────────────────────────────────────────────────

async function loadJourneys(
  session: Session,
  policyReference: string,
  fromS: number,
  toS: number,
): Promise<Journey[]> {
  const journeys: Journey[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await unwrap(
      session.client.GET('/journeys', {
        params: {
          query: {
            policy_reference: policyReference,
            from: fromS,
            to: toS,
            limit: PAGE_SIZE,
            ...(after === undefined ? {} : { after }),
          },
        },
      }),
    );
    journeys.push(...page.journeys);
    if (page.next_cursor === null) return journeys;
    after = page.next_cursor;
  }
}

/** The budget, or null when the policy has none (the service answers 404). */
async function loadBudget(session: Session, policyReference: string): Promise<Budget | null> {
  try {
    return await unwrap(
      session.client.GET('/policys/{policy_reference}/mileage-budget', {
        params: { path: { policy_reference: policyReference } },
      }),
    );
  } catch (caught) {
    if (caught instanceof MilepostError && caught.status === 404) return null;
    throw caught;
  }
}

/** The current statement period: from the end of the last statement (or the term's start) to now. */
function periodOf(policy: PolicyDetails, nowS: number) {
  const ends = policy.versions
    .filter((v) => v.version_type === 'st' && !v.superseded && v.statement_end_date !== null)
    .map((v) => Date.parse(v.statement_end_date ?? ''));
  const lastEndMs = ends.length === 0 ? undefined : Math.max(...ends);
  // A statement's end is its last second (inclusive): the next period starts a second later.
  const startS = lastEndMs === undefined ? policy.policy.start_date : Math.floor(lastEndMs / 1000) + 1;
  const endS = Math.min(nowS, policy.policy.end_date);
  return { startS, endS, billedBefore: lastEndMs !== undefined };
}

// ── The page ──────────────────────────────────────────────────────────────────────────────────────

export function UsagePage({ session }: PageProps) {
  const { policy, error } = usePolicy();
  if (error !== undefined)
    return (
      <>
        <h1>Usage</h1>
        <p className="message error" role="alert">
          {error}
        </p>
      </>
    );
  if (policy === undefined)
    return (
      <>
        <h1>Usage</h1>
        <p role="status">Loading your policy…</p>
      </>
    );
  return <Usage session={session} policy={policy} />;
}

function Usage({ session, policy }: { session: Session; policy: PolicyDetails }) {
  const reference = policy.policy_reference;
  const unit: Unit = policy.product?.usage_unit ?? policy.pricing.usage_unit;
  // NOTE: the service keeps a budget in the product's unit, or miles when the policy names no product.
  const budgetUnit: Unit = policy.product?.usage_unit ?? 'mile';
  const [nowS] = useState(() => Math.floor(Date.now() / 1000));
  const period = periodOf(policy, nowS);
  const term = { startS: policy.policy.start_date, endS: policy.policy.end_date };

  const [journeys, setJourneys] = useState<Journey[] | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [budget, setBudget] = useState<Budget | null | undefined>();
  const [budgetError, setBudgetError] = useState<string | undefined>();
  const [measure, setMeasure] = useState<Measure>('distance');
  const [attempt, setAttempt] = useState(0);

  const fromS = Math.min(period.startS, term.startS);
  useEffect(() => {
    let live = true;
    setLoadError(undefined);
    loadJourneys(session, reference, fromS, nowS).then(
      (loaded) => {
        if (live) setJourneys(loaded);
      },
      (caught: unknown) => {
        if (live) setLoadError(humanError(caught));
      },
    );
    loadBudget(session, reference).then(
      (loaded) => {
        if (live) setBudget(loaded);
      },
      (caught: unknown) => {
        if (live) setBudgetError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, reference, fromS, nowS, attempt]);

  const inUnit = (metres: number) => metres / METRES_PER[unit];
  const budgetMetres = budget == null ? undefined : budget.distance_per_month * METRES_PER[budget.usage_unit];

  let body;
  if (loadError !== undefined)
    body = (
      <LoadFailed
        what="Your journeys"
        error={loadError}
        onRetry={() => {
          setAttempt((n) => n + 1);
        }}
      />
    );
  else if (journeys === undefined) body = <p role="status">Loading your journeys…</p>;
  else if (period.startS > nowS)
    body = (
      <p className="card">Your cover starts on {formatDate(period.startS)}. Your driving will show here.</p>
    );
  else {
    const byDay = sumBy(journeys, (j) => londonDay(j.start_at));
    const days = daysBetween(londonDay(period.startS), londonDay(period.endS));
    const months = monthsBetween(monthOf(londonDay(term.startS)), monthOf(londonDay(term.endS)));
    const periodTotals = total(byDay, days);
    // The year's chart counts only this term's journeys: the period may begin before the term.
    const yearByMonth = sumBy(
      journeys.filter((j) => j.start_at >= term.startS),
      (j) => monthOf(londonDay(j.start_at)),
    );
    const yearSums = total(yearByMonth, months);

    const value = (t: Totals | undefined): number =>
      t === undefined ? 0 : measure === 'distance' ? inUnit(t.distanceMetres) : t.premiumPence / 100;
    const dayBars: ChartBar[] = days.map((day) => {
      const date = utcOf(day);
      return {
        key: day,
        label: String(date.getUTCDate()),
        group: shortMonth.format(date),
        name: formatDate(day),
        value: value(byDay.get(day)),
        budget:
          measure === 'distance' && budgetMetres !== undefined
            ? inUnit(budgetMetres) / daysInMonth(monthOf(day))
            : undefined,
      };
    });
    const monthBars: ChartBar[] = months.map((month) => {
      const date = utcOf(`${month}-01`);
      return {
        key: month,
        label: shortMonth.format(date),
        group: String(date.getUTCFullYear()),
        name: longMonth.format(date),
        value: value(yearByMonth.get(month)),
        budget: measure === 'distance' && budgetMetres !== undefined ? inUnit(budgetMetres) : undefined,
      };
    });

    const axisUnit = measure === 'cost' ? 'GBP' : unit;
    const tooltip = (n: number) => (measure === 'cost' ? formatMoney(n) : formatDistance(n, unit));
    const busiest = (bars: ChartBar[]) =>
      bars.reduce<ChartBar | undefined>(
        (best, bar) => (bar.value > (best?.value ?? 0) ? bar : best),
        undefined,
      );
    /** The chart in a sentence: its total, how many bars have driving, and the largest. */
    const describe = (
      bars: ChartBar[],
      whole: Totals,
      what: string,
      during: string,
      slot: string,
    ): string => {
      const driven = bars.filter((b) => b.value > 0).length;
      const top = busiest(bars);
      if (top === undefined) return `${what} ${during}: no driving yet.`;
      const sum =
        measure === 'distance'
          ? formatDistance(inUnit(whole.distanceMetres), unit)
          : formatMoney(whole.premiumPence / 100);
      const budgetWords =
        measure === 'distance' && budget != null
          ? ` Your budget is ${formatDistance(budget.distance_per_month, budget.usage_unit)} a month.`
          : '';
      return `${what} ${during}: ${sum} in total, ${driven} ${slot}${driven === 1 ? '' : 's'} with driving; the most was ${tooltip(top.value)} ${slot === 'day' ? 'on' : 'in'} ${top.name}.${budgetWords}`;
    };
    const periodWords = `from ${formatDate(period.startS)} to ${formatDate(period.endS)}`;
    const yearWords = `for the policy year ${formatDate(term.startS)} to ${formatDate(term.endS)}`;
    const measureName = measure === 'distance' ? 'Distance' : 'Cost';
    const dailyBudgetNow =
      budgetMetres === undefined ? undefined : inUnit(budgetMetres) / daysInMonth(monthOf(londonDay(nowS)));

    body = (
      <>
        <section aria-labelledby="period-title" className="card">
          <h2 id="period-title">This statement period</h2>
          <p className="hint">
            {period.billedBefore ? 'Since your last statement' : 'Since your cover started'}: {periodWords}.
          </p>
          <dl className="facts">
            <dt>Distance</dt>
            <dd data-testid="period-distance">{formatDistance(inUnit(periodTotals.distanceMetres), unit)}</dd>
            <dt>Cost</dt>
            <dd data-testid="period-cost">{formatMoney(periodTotals.premiumPence / 100)}</dd>
            <dt>Journeys</dt>
            <dd>{periodTotals.journeys}</dd>
          </dl>
          {periodTotals.estimated > 0 ? (
            <p className="hint">
              Includes {periodTotals.estimated} estimated {periodTotals.estimated === 1 ? 'day' : 'days'}{' '}
              while your device was offline.
            </p>
          ) : null}
          <MeasureChoice measure={measure} onChange={setMeasure} />
          {periodTotals.journeys === 0 ? <p className="empty">No driving in this period yet.</p> : null}
          <BarChart
            title={`${measureName} per day`}
            summary={describe(dayBars, periodTotals, `${measureName} per day`, periodWords, 'day')}
            bars={dayBars}
            unit={axisUnit}
            format={tooltip}
          />
          <ChartLegend
            bar={`${measureName} per day`}
            budget={
              measure === 'distance' && dailyBudgetNow !== undefined
                ? `Your budget shared over the month’s days (about ${formatDistance(dailyBudgetNow, unit)} a day now)`
                : undefined
            }
          />
          <FiguresTable
            caption={`Distance and cost per day ${periodWords}`}
            headers={['Day', 'Distance', 'Cost']}
            rows={days.map((day) => {
              const t = byDay.get(day);
              return {
                key: day,
                cells: [
                  formatDate(day),
                  formatDistance(inUnit(t?.distanceMetres ?? 0), unit),
                  formatMoney((t?.premiumPence ?? 0) / 100),
                ],
              };
            })}
          />
        </section>
        <section aria-labelledby="year-title" className="card">
          <h2 id="year-title">This policy year</h2>
          <p className="hint">
            By calendar month, {formatDate(term.startS)} to {formatDate(term.endS)}.
          </p>
          <dl className="facts">
            <dt>Distance</dt>
            <dd data-testid="year-distance">{formatDistance(inUnit(yearSums.distanceMetres), unit)}</dd>
            <dt>Cost</dt>
            <dd data-testid="year-cost">{formatMoney(yearSums.premiumPence / 100)}</dd>
          </dl>
          <BarChart
            title={`${measureName} per month`}
            summary={describe(monthBars, yearSums, `${measureName} per month`, yearWords, 'month')}
            bars={monthBars}
            unit={axisUnit}
            format={tooltip}
          />
          <ChartLegend
            bar={`${measureName} per month`}
            budget={
              measure === 'distance' && budget != null
                ? `Your budget: ${formatDistance(budget.distance_per_month, budget.usage_unit)} a month`
                : undefined
            }
          />
          <FiguresTable
            caption={`Distance and cost per month ${yearWords}`}
            headers={['Month', 'Distance', 'Cost']}
            rows={months.map((month) => {
              const t = yearByMonth.get(month);
              return {
                key: month,
                cells: [
                  longMonth.format(utcOf(`${month}-01`)),
                  formatDistance(inUnit(t?.distanceMetres ?? 0), unit),
                  formatMoney((t?.premiumPence ?? 0) / 100),
                ],
              };
            })}
          />
        </section>
      </>
    );
  }

  return (
    <>
      <h1>Usage</h1>
      {body}
      <BudgetForm
        session={session}
        policyReference={reference}
        unit={budgetUnit}
        budget={budget}
        loadError={budgetError}
        onSaved={setBudget}
      />
    </>
  );
}

/** Which figure the charts draw; the tables always show both. */
function MeasureChoice({ measure, onChange }: { measure: Measure; onChange: (measure: Measure) => void }) {
  const name = useId();
  return (
    <fieldset className="choice">
      <legend>Show</legend>
      {(['distance', 'cost'] as const).map((option) => (
        <label key={option}>
          <input
            type="radio"
            name={name}
            value={option}
            checked={measure === option}
            onChange={() => {
              onChange(option);
            }}
          />{' '}
          {option === 'distance' ? 'Distance' : 'Cost'}
        </label>
      ))}
    </fieldset>
  );
}

/** The budget as typed, checked in words before anything is sent; a number when it is good. */
function checkBudget(text: string, unit: Unit): number | string {
  const units = unit === 'km' ? 'kilometres' : 'miles';
  const cleaned = text.trim().replace(/,/g, '');
  if (cleaned === '') return `Enter your monthly budget in ${units}, for example 500.`;
  if (!/^\d+(\.\d+)?$/.test(cleaned)) return `Enter the budget as a number of ${units}, like 500 or 750.5.`;
  const value = Number(cleaned);
  if (value <= 0) return `The budget must be more than 0 ${units}.`;
  if (value > BUDGET_MAX) return `The budget can be at most ${BUDGET_MAX.toLocaleString('en-GB')} ${units}.`;
  return value;
}

function BudgetForm(props: {
  session: Session;
  policyReference: string;
  unit: Unit;
  budget: Budget | null | undefined;
  loadError: string | undefined;
  onSaved: (budget: Budget) => void;
}) {
  const { session, policyReference, unit, budget, loadError, onSaved } = props;
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const units = unit === 'km' ? 'kilometres' : 'miles';

  const submit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaved(undefined);
    const checked = checkBudget(text, unit);
    if (typeof checked === 'string') {
      setProblem(checked);
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const stored = await unwrap(
        session.client.PUT('/policys/{policy_reference}/mileage-budget', {
          params: { path: { policy_reference: policyReference } },
          body: { distance_per_month: checked },
        }),
      );
      onSaved(stored);
      setText('');
      setSaved(
        `Saved: your budget is ${formatDistance(stored.distance_per_month, stored.usage_unit)} a month.`,
      );
    } catch (caught) {
      setProblem(humanError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="budget-title" className="card">
      <h2 id="budget-title">Monthly budget</h2>
      {loadError !== undefined ? (
        <p className="message error" role="alert">
          Your budget could not be loaded. {loadError}
        </p>
      ) : budget === undefined ? (
        <p role="status">Loading your budget…</p>
      ) : budget === null ? (
        <p>You have not set a budget. Set one and we will tell you when a month’s driving passes it.</p>
      ) : (
        <p data-testid="budget-now">
          Your budget is {formatDistance(budget.distance_per_month, budget.usage_unit)} a month. This month so
          far:{' '}
          {formatDistance(
            budget.distance_this_month_in_metres / METRES_PER[budget.usage_unit],
            budget.usage_unit,
          )}
          {budget.exceeded ? ', over your budget.' : '.'}
        </p>
      )}
      <p className="hint">A budget is for you to keep track: it never changes what you pay.</p>
      <form noValidate onSubmit={(event) => void submit(event)}>
        <div className="field">
          <label htmlFor="budget-distance">Budget a month, in {units}</label>
          <input
            id="budget-distance"
            name="distance_per_month"
            inputMode="decimal"
            autoComplete="off"
            value={text}
            aria-invalid={problem === undefined ? undefined : true}
            aria-describedby={problem === undefined ? undefined : 'budget-problem'}
            onChange={(event) => {
              setText(event.target.value);
            }}
          />
        </div>
        {problem === undefined ? null : (
          <p id="budget-problem" className="message error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : budget == null ? 'Set budget' : 'Change budget'}
        </button>
        <p role="status" className="saved">
          {saved}
        </p>
      </form>
    </section>
  );
}
