import { useEffect, useId, useState } from 'react';
import {
  MilepostError,
  unwrap,
  type components,
  type PolicyDetails,
  type Session,
} from '../../../sdk/src/index.ts';
import { formatDate, formatDistance, formatMoney } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { BudgetForm } from './budget-form.tsx';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { BarChart, ChartLegend, FiguresTable, type ChartBar } from './usage-chart.tsx';
import {
  daysBetween,
  daysInMonth,
  londonDay,
  longMonth,
  METRES_PER,
  monthOf,
  monthsBetween,
  periodOf,
  shortMonth,
  sumBy,
  total,
  utcOf,
  type Totals,
  type Unit,
} from './usage-sums.ts';

type Journey = components['schemas']['Journey'];
type Budget = components['schemas']['MileageBudget'];
type Measure = 'distance' | 'cost';

/** The API's page limit for journeys. */
const PAGE_SIZE = 500;

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

/** The journeys since `fromS` and the budget, loaded together (again on `retry`). */
function useUsage(session: Session, reference: string, fromS: number, nowS: number) {
  const [journeys, setJourneys] = useState<Journey[] | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [budget, setBudget] = useState<Budget | null | undefined>();
  const [budgetError, setBudgetError] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
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
  const retry = () => {
    setAttempt((n) => n + 1);
  };
  return { journeys, loadError, budget, setBudget, budgetError, retry };
}

function Usage({ session, policy }: { session: Session; policy: PolicyDetails }) {
  const reference = policy.policy_reference;
  const unit: Unit = policy.product?.usage_unit ?? policy.pricing.usage_unit;
  // NOTE: the service keeps a budget in the product's unit, or miles when the policy names no product.
  const budgetUnit: Unit = policy.product?.usage_unit ?? 'mile';
  const [nowS] = useState(() => Math.floor(Date.now() / 1000));
  const period = periodOf(policy, nowS);
  const term = { startS: policy.policy.start_date, endS: policy.policy.end_date };
  const [measure, setMeasure] = useState<Measure>('distance');
  const usage = useUsage(session, reference, Math.min(period.startS, term.startS), nowS);

  let body;
  if (usage.loadError !== undefined)
    body = <LoadFailed what="Your journeys" error={usage.loadError} onRetry={usage.retry} />;
  else if (usage.journeys === undefined) body = <p role="status">Loading your journeys…</p>;
  else if (period.startS > nowS)
    body = (
      <p className="card">Your cover starts on {formatDate(period.startS)}. Your driving will show here.</p>
    );
  else {
    const measuring: Measuring = { measure, unit, budget: usage.budget };
    body = (
      <>
        <PeriodCard
          journeys={usage.journeys}
          period={period}
          nowS={nowS}
          measuring={measuring}
          onMeasure={setMeasure}
        />
        <YearCard journeys={usage.journeys} term={term} measuring={measuring} />
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
        budget={usage.budget}
        loadError={usage.budgetError}
        onSaved={usage.setBudget}
      />
    </>
  );
}

/** What the charts draw (distance in the policy's unit, or cost), and the budget they draw it against. */
interface Measuring {
  readonly measure: Measure;
  readonly unit: Unit;
  readonly budget: Budget | null | undefined;
}

/** Metres in the policy's unit. */
const inUnit = ({ unit }: Measuring, metres: number): number => metres / METRES_PER[unit];
/** The budget a month in metres, when there is one. */
const budgetMetresOf = ({ budget }: Measuring): number | undefined =>
  budget == null ? undefined : budget.distance_per_month * METRES_PER[budget.usage_unit];
/** A bar's height: the distance in the unit or the cost in pounds. */
const valueOf = (m: Measuring, t: Totals | undefined): number =>
  t === undefined ? 0 : m.measure === 'distance' ? inUnit(m, t.distanceMetres) : t.premiumPence / 100;
/** A figure as the chart's tooltip reads it. */
const figure = (m: Measuring, n: number): string =>
  m.measure === 'cost' ? formatMoney(n) : formatDistance(n, m.unit);
const measureName = (m: Measuring): string => (m.measure === 'distance' ? 'Distance' : 'Cost');

/** The chart in a sentence: its total, how many bars have driving, and the largest. */
function describe(m: Measuring, bars: ChartBar[], whole: Totals, what: string, during: string, slot: string) {
  const driven = bars.filter((b) => b.value > 0).length;
  const top = bars.reduce<ChartBar | undefined>(
    (best, bar) => (bar.value > (best?.value ?? 0) ? bar : best),
    undefined,
  );
  if (top === undefined) return `${what} ${during}: no driving yet.`;
  const sum =
    m.measure === 'distance'
      ? formatDistance(inUnit(m, whole.distanceMetres), m.unit)
      : formatMoney(whole.premiumPence / 100);
  const budgetWords =
    m.measure === 'distance' && m.budget != null
      ? ` Your budget is ${formatDistance(m.budget.distance_per_month, m.budget.usage_unit)} a month.`
      : '';
  return `${what} ${during}: ${sum} in total, ${driven} ${slot}${driven === 1 ? '' : 's'} with driving; the most was ${figure(m, top.value)} ${slot === 'day' ? 'on' : 'in'} ${top.name}.${budgetWords}`;
}

/** The rows of a figures table: each day's or month's distance and cost. */
const figureRows = (
  m: Measuring,
  keys: readonly string[],
  sums: Map<string, Totals>,
  name: (key: string) => string,
) =>
  keys.map((key) => {
    const t = sums.get(key);
    return {
      key,
      cells: [
        name(key),
        formatDistance(inUnit(m, t?.distanceMetres ?? 0), m.unit),
        formatMoney((t?.premiumPence ?? 0) / 100),
      ],
    };
  });

/** The current statement period, day by day. */
function PeriodCard(props: {
  journeys: readonly Journey[];
  period: ReturnType<typeof periodOf>;
  nowS: number;
  measuring: Measuring;
  onMeasure: (measure: Measure) => void;
}) {
  const { journeys, period, measuring: m } = props;
  const byDay = sumBy(journeys, (j) => londonDay(j.start_at));
  const days = daysBetween(londonDay(period.startS), londonDay(period.endS));
  const periodTotals = total(byDay, days);
  const budgetMetres = budgetMetresOf(m);
  const bars: ChartBar[] = days.map((day) => {
    const date = utcOf(day);
    return {
      key: day,
      label: String(date.getUTCDate()),
      group: shortMonth.format(date),
      name: formatDate(day),
      value: valueOf(m, byDay.get(day)),
      budget:
        m.measure === 'distance' && budgetMetres !== undefined
          ? inUnit(m, budgetMetres) / daysInMonth(monthOf(day))
          : undefined,
    };
  });
  const words = `from ${formatDate(period.startS)} to ${formatDate(period.endS)}`;
  const dailyBudgetNow =
    budgetMetres === undefined
      ? undefined
      : inUnit(m, budgetMetres) / daysInMonth(monthOf(londonDay(props.nowS)));
  return (
    <section aria-labelledby="period-title" className="card">
      <h2 id="period-title">This statement period</h2>
      <p className="hint">
        {period.billedBefore ? 'Since your last statement' : 'Since your cover started'}: {words}.
      </p>
      <dl className="facts">
        <dt>Distance</dt>
        <dd data-testid="period-distance">
          {formatDistance(inUnit(m, periodTotals.distanceMetres), m.unit)}
        </dd>
        <dt>Cost</dt>
        <dd data-testid="period-cost">{formatMoney(periodTotals.premiumPence / 100)}</dd>
        <dt>Journeys</dt>
        <dd>{periodTotals.journeys}</dd>
      </dl>
      {periodTotals.estimated > 0 ? (
        <p className="hint">
          Includes {periodTotals.estimated} estimated {periodTotals.estimated === 1 ? 'day' : 'days'} while
          your device was offline.
        </p>
      ) : null}
      <MeasureChoice measure={m.measure} onChange={props.onMeasure} />
      {periodTotals.journeys === 0 ? <p className="empty">No driving in this period yet.</p> : null}
      <BarChart
        title={`${measureName(m)} per day`}
        summary={describe(m, bars, periodTotals, `${measureName(m)} per day`, words, 'day')}
        bars={bars}
        unit={m.measure === 'cost' ? 'GBP' : m.unit}
        format={(n) => figure(m, n)}
      />
      <ChartLegend
        bar={`${measureName(m)} per day`}
        budget={
          m.measure === 'distance' && dailyBudgetNow !== undefined
            ? `Your budget shared over the month’s days (about ${formatDistance(dailyBudgetNow, m.unit)} a day now)`
            : undefined
        }
      />
      <FiguresTable
        caption={`Distance and cost per day ${words}`}
        headers={['Day', 'Distance', 'Cost']}
        rows={figureRows(m, days, byDay, formatDate)}
      />
    </section>
  );
}

/** The policy year, month by month (this term's journeys only: the period may begin before the term). */
function YearCard(props: {
  journeys: readonly Journey[];
  term: { startS: number; endS: number };
  measuring: Measuring;
}) {
  const { term, measuring: m } = props;
  const months = monthsBetween(monthOf(londonDay(term.startS)), monthOf(londonDay(term.endS)));
  const byMonth = sumBy(
    props.journeys.filter((j) => j.start_at >= term.startS),
    (j) => monthOf(londonDay(j.start_at)),
  );
  const sums = total(byMonth, months);
  const budgetMetres = budgetMetresOf(m);
  const bars: ChartBar[] = months.map((month) => {
    const date = utcOf(`${month}-01`);
    return {
      key: month,
      label: shortMonth.format(date),
      group: String(date.getUTCFullYear()),
      name: longMonth.format(date),
      value: valueOf(m, byMonth.get(month)),
      budget: m.measure === 'distance' && budgetMetres !== undefined ? inUnit(m, budgetMetres) : undefined,
    };
  });
  const words = `for the policy year ${formatDate(term.startS)} to ${formatDate(term.endS)}`;
  return (
    <section aria-labelledby="year-title" className="card">
      <h2 id="year-title">This policy year</h2>
      <p className="hint">
        By calendar month, {formatDate(term.startS)} to {formatDate(term.endS)}.
      </p>
      <dl className="facts">
        <dt>Distance</dt>
        <dd data-testid="year-distance">{formatDistance(inUnit(m, sums.distanceMetres), m.unit)}</dd>
        <dt>Cost</dt>
        <dd data-testid="year-cost">{formatMoney(sums.premiumPence / 100)}</dd>
      </dl>
      <BarChart
        title={`${measureName(m)} per month`}
        summary={describe(m, bars, sums, `${measureName(m)} per month`, words, 'month')}
        bars={bars}
        unit={m.measure === 'cost' ? 'GBP' : m.unit}
        format={(n) => figure(m, n)}
      />
      <ChartLegend
        bar={`${measureName(m)} per month`}
        budget={
          m.measure === 'distance' && m.budget != null
            ? `Your budget: ${formatDistance(m.budget.distance_per_month, m.budget.usage_unit)} a month`
            : undefined
        }
      />
      <FiguresTable
        caption={`Distance and cost per month ${words}`}
        headers={['Month', 'Distance', 'Cost']}
        rows={figureRows(m, months, byMonth, (month) => longMonth.format(utcOf(`${month}-01`)))}
      />
    </section>
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
