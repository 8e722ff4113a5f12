import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import type { MilepostClient } from '../../../sdk/src/client.ts';
import { MilepostError, networkError } from '../../../sdk/src/errors.ts';
import { formatMoney } from '../../shared/format.ts';
import { consoleError } from './api.ts';
import type { RateBook, RateBookImpact, Tenant } from './api-types.ts';
import { readEventStream } from './billing-run-stream.ts';
import { useConsole } from './console-context.tsx';
import { DataTable } from './data-table.tsx';

interface Progress {
  readonly in_force: number;
  readonly done: number;
}

type ImpactEvent =
  | { readonly name: 'progress'; readonly progress: Progress }
  | { readonly name: 'done'; readonly report: RateBookImpact }
  | { readonly name: 'error'; readonly detail: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/*
 * NOTE: the OpenAPI document describes the JSON report, not the server-sent events; each event is
 * checked as far as the page reads it (the report's shape is only ever added to, impact-schemas.ts).
 */
function eventOf(name: string, data: unknown): ImpactEvent | undefined {
  if (!isRecord(data)) return undefined;
  if (name === 'progress' && typeof data['in_force'] === 'number' && typeof data['done'] === 'number')
    return { name, progress: { in_force: data['in_force'], done: data['done'] } };
  if (
    name === 'done' &&
    Array.isArray(data['bands']) &&
    Array.isArray(data['movers']) &&
    isRecord(data['total'])
  )
    return { name, report: data as unknown as RateBookImpact };
  if (name === 'error') return { name, detail: String(data['detail']) };
  return undefined;
}

/** Runs the impact test and passes each report to `onEvent` as it streams (a POST, read from fetch). */
async function streamImpact(
  client: MilepostClient,
  tenant: Tenant,
  path: { rate_book_reference: string; version_number: string },
  onEvent: (event: ImpactEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  let answer;
  try {
    answer = await client.POST('/admin/rate-books/{rate_book_reference}/versions/{version_number}/impact', {
      params: { path },
      body: { company_reference: tenant.company.company_reference, environment: tenant.environment },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      signal,
    });
  } catch (cause) {
    throw cause instanceof MilepostError ? cause : networkError(cause);
  }
  await readEventStream(answer, (name, data) => {
    const event = eventOf(name, data);
    if (event !== undefined) onEvent(event);
  });
}

/** Each band's name in words, in the report's order. */
const BAND_NAMES: Readonly<Record<string, string>> = {
  below_minus_10: 'Below −10 %',
  minus_10_to_minus_5: '−10 to −5 %',
  minus_5_to_0: '−5 to 0 %',
  unchanged: 'Unchanged',
  '0_to_5': '0 to +5 %',
  '5_to_10': '+5 to +10 %',
  above_10: 'Above +10 %',
};

const percentText = (value: number | null): string =>
  value === null ? '—' : `${value > 0 ? '+' : ''}${value.toFixed(2)} %`;

/** The test of a draft against the policies in force: progress while it runs, then the report. */
export function ImpactPanel({ tenant, book, number }: { tenant: Tenant; book: RateBook; number: number }) {
  const { api } = useConsole();
  const id = useId();
  const [running, setRunning] = useState(false);
  const [progress, setProgress] = useState<Progress | undefined>();
  const [report, setReport] = useState<RateBookImpact | undefined>();
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
    setReport(undefined);
    setError(undefined);
    const path = { rate_book_reference: book.rate_book_reference, version_number: String(number) };
    streamImpact(
      api.client,
      tenant,
      path,
      (event) => {
        if (event.name === 'progress') setProgress(event.progress);
        else if (event.name === 'done') setReport(event.report);
        else setError(event.detail);
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
  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <h4 id={`${id}-title`}>Impact on the policies in force</h4>
      <p>
        Re-rates every policy of {book.product_reference} in force on version {number}; nothing is changed.
      </p>
      <button type="button" className="secondary" disabled={running} onClick={start}>
        {running ? 'Testing…' : `Test the impact of version ${String(number)}`}
      </button>
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      {running && progress !== undefined ? (
        <p role="status">
          <label htmlFor={`${id}-bar`}>Policies re-rated </label>
          <progress id={`${id}-bar`} max={Math.max(progress.in_force, 1)} value={progress.done}>
            {progress.done} of {progress.in_force}
          </progress>{' '}
          {progress.done} of {progress.in_force}
        </p>
      ) : null}
      {report === undefined ? null : <ImpactReport report={report} />}
    </section>
  );
}

/** The bands as a bar chart of policies (SVG, described by the table after it), the totals, the movers. */
function ImpactReport({ report }: { report: RateBookImpact }) {
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    heading.current?.focus();
  }, []);
  const most = Math.max(1, ...report.bands.map((b) => b.policies));
  const barWidth = 60;
  const gap = 16;
  const chartHeight = 160;
  const width = report.bands.length * (barWidth + gap);
  return (
    <div data-testid="impact-report">
      <h5 id={`${id}-title`} ref={heading} tabIndex={-1}>
        Impact of version {report.version_number}: {report.rated} policies rated of {report.policies}
      </h5>
      <figure>
        <svg
          role="img"
          aria-labelledby={`${id}-chart`}
          viewBox={`0 0 ${String(width)} ${String(chartHeight + 40)}`}
          className="impact-chart"
        >
          <title id={`${id}-chart`}>
            Policies by change of fixed premium:{' '}
            {report.bands.map((b) => `${BAND_NAMES[b.band] ?? b.band} ${String(b.policies)}`).join(', ')}
          </title>
          {report.bands.map((b, i) => {
            const height = Math.round((b.policies / most) * chartHeight);
            const x = i * (barWidth + gap);
            return (
              <g key={b.band}>
                <rect
                  x={x}
                  y={chartHeight - height}
                  width={barWidth}
                  height={height}
                  className={`bar band-${b.band}`}
                />
                <text x={x + barWidth / 2} y={chartHeight + 14} textAnchor="middle" fontSize="10">
                  {BAND_NAMES[b.band] ?? b.band}
                </text>
                <text x={x + barWidth / 2} y={chartHeight + 30} textAnchor="middle" fontSize="10">
                  {b.policies}
                </text>
              </g>
            );
          })}
        </svg>
        <figcaption>The chart’s figures are in the table below.</figcaption>
      </figure>
      <DataTable
        label="Policies by change of fixed premium"
        testId="impact-bands"
        columns={[
          { header: 'Change', cell: (b) => BAND_NAMES[b.band] ?? b.band },
          { header: 'Policies', cell: (b) => b.policies, number: true },
          { header: 'Current premium', cell: (b) => formatMoney(b.current_premium), number: true },
          { header: 'New premium', cell: (b) => formatMoney(b.new_premium), number: true },
          { header: 'Change', cell: (b) => formatMoney(b.change), number: true },
          { header: '%', cell: (b) => percentText(b.change_percent), number: true },
        ]}
        rows={report.bands}
        rowKey={(b) => b.band}
      />
      <dl className="facts" data-testid="impact-totals">
        <dt>Current premium</dt>
        <dd>{formatMoney(report.total.current_premium)}</dd>
        <dt>New premium</dt>
        <dd>{formatMoney(report.total.new_premium)}</dd>
        <dt>Change</dt>
        <dd>
          {formatMoney(report.total.change)} ({percentText(report.total.change_percent)})
        </dd>
        <dt>Referred</dt>
        <dd>{report.referred}</dd>
        <dt>Declined</dt>
        <dd>{report.declined.policies}</dd>
        <dt>Not rated</dt>
        <dd>{report.unrated.policies}</dd>
      </dl>
      {report.movers.length === 0 ? null : (
        <DataTable
          label="The 20 largest movers"
          testId="impact-movers"
          columns={[
            { header: 'Policy', cell: (m) => m.policy_reference },
            { header: 'Current premium', cell: (m) => formatMoney(m.current_premium), number: true },
            { header: 'New premium', cell: (m) => formatMoney(m.new_premium), number: true },
            { header: 'Change', cell: (m) => formatMoney(m.change), number: true },
            { header: '%', cell: (m) => percentText(m.change_percent), number: true },
          ]}
          rows={report.movers}
          rowKey={(m) => m.policy_reference}
        />
      )}
    </div>
  );
}
