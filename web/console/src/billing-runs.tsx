import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { consoleError } from './api.ts';
import type { BillingRun, BillingRunCounts } from './api-types.ts';
import { streamBillingRun } from './billing-run-stream.ts';
import { useConsole } from './console-context.tsx';
import { TableBox } from './ui.tsx';

/** Today in London as YYYY-MM-DD (the billing day a run bills by default). */
const londonToday = (): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date());

/** Starts a billing run for a day and follows it live: a progress bar, the counts, then the failures. */
export function BillingRunsPage() {
  const { api } = useConsole();
  const [date, setDate] = useState(londonToday);
  const [running, setRunning] = useState(false);
  const [progress, setProgress] = useState<BillingRunCounts | undefined>();
  const [result, setResult] = useState<BillingRun | undefined>();
  const [error, setError] = useState<string | undefined>();
  const abort = useRef<AbortController | undefined>(undefined);
  useEffect(
    () => () => {
      abort.current?.abort();
    },
    [],
  );

  const start = () => {
    const controller = new AbortController();
    abort.current = controller;
    setRunning(true);
    setProgress(undefined);
    setResult(undefined);
    setError(undefined);
    streamBillingRun(
      api.client,
      date,
      (event) => {
        if (event.name === 'progress') setProgress(event.counts);
        else if (event.name === 'done') {
          setProgress(event.run);
          setResult(event.run);
        } else setError(event.detail);
      },
      controller.signal,
    ).then(
      () => {
        setRunning(false);
      },
      (caught: unknown) => {
        if (controller.signal.aborted) return;
        setRunning(false);
        setError(consoleError(caught));
      },
    );
  };

  const counts = result ?? progress;
  return (
    <>
      <h1>Billing runs</h1>
      <RunForm date={date} running={running} onDate={setDate} onStart={start} />
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      {counts === undefined ? null : <RunProgress counts={counts} result={result} />}
    </>
  );
}

function RunForm(props: {
  date: string;
  running: boolean;
  onDate: (date: string) => void;
  onStart: () => void;
}) {
  const id = useId();
  return (
    <form
      className="panel run-form"
      onSubmit={(event) => {
        event.preventDefault();
        props.onStart();
      }}
    >
      <div className="field">
        <label htmlFor={`${id}-date`}>Billing day</label>
        <span className="hint" id={`${id}-date-hint`}>
          Bills every policy whose billing day this is, in both environments. Policies already billed for the
          day are left alone.
        </span>
        <input
          id={`${id}-date`}
          type="date"
          value={props.date}
          required
          aria-describedby={`${id}-date-hint`}
          onChange={(event) => {
            props.onDate(event.target.value);
          }}
        />
      </div>
      <button type="submit" className="primary" disabled={props.running || props.date === ''}>
        {props.running ? 'Running…' : 'Start the run'}
      </button>
    </form>
  );
}

/** The run's counts as they come (a bar and the figures), and once it is done, what failed. */
function RunProgress({ counts, result }: { counts: BillingRunCounts; result: BillingRun | undefined }) {
  const id = useId();
  const summary = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    if (result !== undefined) summary.current?.focus();
  }, [result]);
  const done = counts.billed + counts.already_billed + counts.failed;
  // A finished run fills the bar, even one that had nothing due.
  const finished = result === undefined ? done : Math.max(done, result.due, 1);
  return (
    <section className="panel" aria-labelledby={`${id}-progress`}>
      <h2 id={`${id}-progress`} ref={summary} tabIndex={-1}>
        {result === undefined ? `Billing ${counts.date}…` : `Billing run for ${counts.date} finished`}
      </h2>
      <label htmlFor={`${id}-bar`} className="visually-hidden">
        Policies done
      </label>
      <progress id={`${id}-bar`} max={Math.max(counts.due, 1)} value={finished} className="run-bar">
        {done} of {counts.due}
      </progress>
      <dl className="facts counts" data-testid="run-counts">
        <dt>Due</dt>
        <dd>{counts.due}</dd>
        <dt>Billed</dt>
        <dd>{counts.billed}</dd>
        <dt>Already billed</dt>
        <dd>{counts.already_billed}</dd>
        <dt>Failed</dt>
        <dd>{counts.failed}</dd>
      </dl>
      {result === undefined || result.failures.length === 0 ? null : (
        <TableBox label="Failures">
          <table className="grid">
            <caption>Failures</caption>
            <thead>
              <tr>
                <th scope="col">Policy</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {result.failures.map((failure) => (
                <tr key={failure.policy_reference}>
                  <th scope="row">{failure.policy_reference}</th>
                  <td>{failure.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}
