import { useLayoutEffect, useRef, useState, type SyntheticEvent } from 'react';
import { unwrap } from '../../../sdk/src/index.ts';
import { formatDate } from '../../shared/format.ts';
import { PlacePicker, type PickedPoint } from '../../shared/map/place-picker.tsx';
import { loadPlaces } from '../../shared/map/places.ts';
import { newRequestReference } from '../../shared/request-reference.ts';
import { PhotoPicker, sendPhotos } from './claim-photos.tsx';
import { AccidentQuestions, checkAnswers, NO_ANSWERS, settle, type Answers } from './claim-questions.tsx';
import { AnswerOutcome, type Outcome } from './claim-outcome.tsx';
import { useClaims } from './claims-context.tsx';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';

const londonWall = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** Milliseconds London's clock is ahead of UTC at an instant (0 in winter, an hour in summer). */
function londonOffsetMs(at: number): number {
  const parts = Object.fromEntries(
    londonWall.formatToParts(new Date(at)).map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(
    parts['year'] ?? 0,
    (parts['month'] ?? 1) - 1,
    parts['day'] ?? 1,
    parts['hour'] ?? 0,
    parts['minute'] ?? 0,
  );
  return wall - Math.floor(at / 60_000) * 60_000;
}

/**
 * A date as typed in the UK (`28/11/2026`, also with dots, dashes or spaces) and a 24-hour time (`14:30` or
 * `14.30`), in London, as UNIX seconds; undefined when either is not one. Text fields, not the browser's date
 * and time inputs, whose order and clock follow the browser's language rather than the page's.
 * NOTE: the hour skipped when the clocks go forward reads as the hour after; the hour repeated when they go
 * back reads as its first (summer-time) occurrence.
 */
export function londonInstant(date: string, time: string): number | undefined {
  const d = /^(\d{1,2})[/.\- ](\d{1,2})[/.\- ](\d{4})$/.exec(date.trim());
  const t = /^(\d{1,2})[:.](\d{2})$/.exec(time.trim());
  if (d === null || t === null) return undefined;
  const [day, month, year, hour, minute] = [d[1], d[2], d[3], t[1], t[2]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (hour > 23 || minute > 59) return undefined;
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const check = new Date(wall);
  // 31/02 rolls over to March in Date.UTC: a day that is not in the calendar is refused.
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  const guess = wall - londonOffsetMs(wall);
  return Math.floor((wall - londonOffsetMs(guess)) / 1000);
}

type Problems = Partial<Record<keyof Answers | 'when' | 'where', string>>;

/** The problems less one, once its field has changed. */
const without = (problems: Problems, key: keyof Problems): Problems =>
  Object.fromEntries(Object.entries(problems).filter(([name]) => name !== key));

/** The report as typed, checked in words before anything is sent; the body when all is well. */
function checkReport(date: string, time: string, where: PickedPoint | undefined, answers: Answers) {
  const problems: Problems = {};
  const occurredAt = londonInstant(date, time);
  if (occurredAt === undefined)
    problems.when =
      'Enter the date as day/month/year, like 28/11/2026, and the time on the 24-hour clock, like 14:30.';
  else if (occurredAt * 1000 > Date.now()) problems.when = 'The time it happened cannot be in the future.';
  if (where === undefined) problems.where = 'Mark where it happened on the map.';
  const checked = checkAnswers(answers, true);
  if (!checked.ok) Object.assign(problems, checked.problems);
  if (!checked.ok || occurredAt === undefined || where === undefined || Object.keys(problems).length > 0)
    return { ok: false as const, problems };
  return {
    ok: true as const,
    body: {
      ...checked.body,
      description: checked.body.description ?? '',
      occurred_at: occurredAt,
      // A millionth of a degree is about 10 cm: finer than any tap on a map.
      lat: Number(where.lat.toFixed(6)),
      lon: Number(where.lon.toFixed(6)),
    },
  };
}

/** "Report an accident" with no crash detected: when, where on the map, what happened, and photos. */
export function ClaimReportPage({ session }: PageProps) {
  const { policy } = usePolicy();
  const { reload } = useClaims();
  const [date, setDate] = useState('');
  const [time, setTime] = useState('');
  const [where, setWhere] = useState<PickedPoint | undefined>();
  const [answers, setAnswers] = useState<Answers>(NO_ANSWERS);
  const [files, setFiles] = useState<File[]>([]);
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  // The report last sent and its reference: sent again unchanged (its answer lost), it keeps the
  // reference and opens one claim; changed, it is a new report.
  const sent = useRef<{ body: string; reference: string } | undefined>(undefined);
  const alert = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => {
    if (error !== undefined) alert.current?.focus();
  }, [error]);

  const submit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (policy === undefined) return;
    const checked = checkReport(date, time, where, answers);
    setProblems(checked.ok ? {} : checked.problems);
    if (!checked.ok) {
      setError('Please check the details marked below.');
      return;
    }
    setError(undefined);
    setBusy(true);
    const body = JSON.stringify(checked.body);
    if (sent.current?.body !== body) sent.current = { body, reference: newRequestReference('app') };
    try {
      const reported = await unwrap(
        session.client.POST('/policys/{policy_reference}/claims', {
          params: { path: { policy_reference: policy.policy_reference } },
          body: { ...checked.body, report_reference: sent.current.reference },
        }),
      );
      setOutcome(await sendPhotos(session, reported, files));
      reload();
    } catch (caught) {
      setError(humanError(caught));
    } finally {
      setBusy(false);
    }
  };

  if (outcome !== undefined)
    return (
      <>
        <h1>Report an accident</h1>
        <AnswerOutcome outcome={outcome} />
      </>
    );
  return (
    <>
      <h1>Report an accident</h1>
      <p>
        Tell us about an accident or damage to your car. If anyone is hurt or in danger, call 999 first.
        {policy === undefined ? '' : ` Your policy began on ${formatDate(policy.policy.start_date)}.`}
      </p>
      {error === undefined ? null : (
        <p className="message error" role="alert" tabIndex={-1} ref={alert}>
          {error}
        </p>
      )}
      <form noValidate onSubmit={(event) => void submit(event)} className="claim-report">
        <WhenFields
          date={date}
          time={time}
          problem={problems.when}
          onDate={(next) => {
            setProblems(without(problems, 'when'));
            setDate(next);
          }}
          onTime={(next) => {
            setProblems(without(problems, 'when'));
            setTime(next);
          }}
        />
        <fieldset>
          <legend>Where it happened</legend>
          <PlacePicker
            value={where}
            onChange={(next) => {
              setProblems(without(problems, 'where'));
              setWhere(next);
            }}
            places={loadPlaces}
            label="Map: where it happened"
            invalid={problems.where !== undefined}
            describedBy={problems.where === undefined ? undefined : 'report-where-problem'}
          />
          {problems.where === undefined ? null : (
            <span id="report-where-problem" className="field-problem">
              {problems.where}
            </span>
          )}
        </fieldset>
        <AccidentQuestions
          answers={answers}
          problems={problems}
          descriptionRequired
          onChange={(next) => {
            setProblems(settle(problems, answers, next));
            setAnswers(next);
          }}
        />
        <PhotoPicker files={files} onChange={setFiles} />
        <button type="submit" className="primary" disabled={busy || policy === undefined}>
          {busy ? 'Sending…' : 'Report the accident'}
        </button>
      </form>
    </>
  );
}

/** The date and time it happened, in London time, with what is wrong with them. */
function WhenFields(props: {
  date: string;
  time: string;
  problem: string | undefined;
  onDate: (date: string) => void;
  onTime: (time: string) => void;
}) {
  const { date, time, problem, onDate, onTime } = props;
  return (
    <fieldset className="when" aria-describedby={problem === undefined ? undefined : 'report-when-problem'}>
      <legend>When it happened</legend>
      <div className="field">
        <label htmlFor="report-date">Date</label>
        <span className="hint" id="report-date-hint">
          Day/month/year, for example 28/11/2026
        </span>
        <input
          id="report-date"
          inputMode="numeric"
          autoComplete="off"
          value={date}
          aria-describedby="report-date-hint"
          aria-invalid={problem === undefined ? undefined : true}
          onChange={(event) => {
            onDate(event.target.value);
          }}
        />
      </div>
      <div className="field">
        <label htmlFor="report-time">Time (UK)</label>
        <span className="hint" id="report-time-hint">
          24-hour clock, for example 14:30
        </span>
        <input
          id="report-time"
          inputMode="numeric"
          autoComplete="off"
          value={time}
          aria-describedby="report-time-hint"
          aria-invalid={problem === undefined ? undefined : true}
          onChange={(event) => {
            onTime(event.target.value);
          }}
        />
      </div>
      {problem === undefined ? null : (
        <span id="report-when-problem" className="field-problem">
          {problem}
        </span>
      )}
    </fieldset>
  );
}
