import { useEffect, useRef, useState } from 'react';
import { FiguresTable } from './usage-chart.tsx';

/** A month of `GET /policys/:ref/scores`, as the chart needs it. */
export interface TrendMonth {
  /** `YYYY-MM`, a London calendar month. */
  readonly month: string;
  readonly score: number | null;
  readonly provisional: boolean;
  readonly distance_miles: number;
}

const HEIGHT_PX = 200;
const TOP_PX = 10;
const BOTTOM_PX = 28;
const AXIS_PX = 34;
const TICKS = [0, 25, 50, 75, 100];

const monthName = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const monthShort = new Intl.DateTimeFormat('en-GB', { month: 'short', timeZone: 'UTC' });
const monthDate = (month: string): Date => new Date(`${month}-01T12:00:00Z`);
/** "May 2026". */
export const formatMonth = (month: string): string => monthName.format(monthDate(month));

/**
 * The months' scores as a line on a fixed 0–100 axis (scores are comparable month to month), a
 * provisional month drawn hollow. One image to assistive technology, described in words, with the
 * figures in a table below it.
 */
export function ScoreTrend({ months }: { readonly months: readonly TrendMonth[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [widthPx, setWidthPx] = useState(300);
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const observer = new ResizeObserver(() => {
      setWidthPx(element.clientWidth);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, []);
  const plotPx = HEIGHT_PX - TOP_PX - BOTTOM_PX;
  const slotPx = (widthPx - AXIS_PX) / Math.max(months.length, 1);
  const x = (index: number) => AXIS_PX + slotPx * (index + 0.5);
  const y = (score: number) => TOP_PX + plotPx - (score / 100) * plotPx;
  const scored = months.flatMap((m, index) => (m.score === null ? [] : [{ ...m, score: m.score, index }]));
  // Joined only between months next to each other: a month without trips breaks the line.
  let line = '';
  scored.forEach((m, k) => {
    const joined = scored[k - 1]?.index === m.index - 1;
    line += `${joined ? 'L' : 'M'}${x(m.index).toFixed(1)} ${y(m.score).toFixed(1)} `;
  });
  const labelEvery = Math.max(1, Math.ceil(34 / slotPx));
  const summary =
    scored.length === 0
      ? 'No month has a score yet.'
      : `Driving score by month: ${scored
          .map((m) => `${formatMonth(m.month)} ${m.score}${m.provisional ? ' (provisional)' : ''}`)
          .join(', ')}.`;
  return (
    <>
      <div ref={box} className="score-trend">
        <svg role="img" aria-label={summary} width={widthPx} height={HEIGHT_PX} className="chart">
          {TICKS.map((tick) => (
            <g key={tick}>
              <line className="grid" x1={AXIS_PX} x2={widthPx} y1={y(tick)} y2={y(tick)} />
              <text className="axis" x={AXIS_PX - 6} y={y(tick) + 4} textAnchor="end">
                {tick}
              </text>
            </g>
          ))}
          {line === '' ? null : <path className="score-line" d={line} />}
          {scored.map((m) => (
            <circle
              key={m.month}
              className={m.provisional ? 'score-point provisional' : 'score-point'}
              cx={x(m.index)}
              cy={y(m.score)}
              r={5}
            />
          ))}
          {months.map((m, index) =>
            (months.length - 1 - index) % labelEvery === 0 ? (
              <text
                key={m.month}
                className="axis"
                x={x(index)}
                y={HEIGHT_PX - BOTTOM_PX + 16}
                textAnchor="middle"
              >
                {monthShort.format(monthDate(m.month))}
              </text>
            ) : null,
          )}
        </svg>
      </div>
      <ul className="chart-legend">
        <li>
          <span className="swatch swatch-score" aria-hidden="true" /> Final score
        </li>
        <li>
          <span className="swatch swatch-score provisional" aria-hidden="true" /> Provisional
        </li>
      </ul>
      <FiguresTable
        caption="Driving score by month"
        headers={['Month', 'Score', 'Miles scored', 'Status']}
        rows={months.map((m) => ({
          key: m.month,
          cells: [
            formatMonth(m.month),
            m.score === null ? '—' : m.score.toFixed(1),
            m.distance_miles.toFixed(1),
            m.score === null ? 'No scored trips' : m.provisional ? 'Provisional' : 'Final',
          ],
        }))}
      />
    </>
  );
}
