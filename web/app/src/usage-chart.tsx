import { useEffect, useRef, useState } from 'react';
import { axisLabels, MIN_STEP, niceAxis, type AxisUnit } from '../../shared/axis-ticks.ts';

/** One bar of a chart: a day or a month. */
export interface ChartBar {
  readonly key: string;
  /** Under the bar: the day of the month, or the month's short name. */
  readonly label: string;
  /** Under the label where a new group starts (the month of a day; the year of a month). */
  readonly group?: string | undefined;
  /** The bar's full name for its tooltip, e.g. "3 June 2025". */
  readonly name: string;
  /** In the chart's unit (miles, kilometres or pounds). */
  readonly value: number;
  /** The budget's level for this bar in the same unit; undefined where there is none. */
  readonly budget?: number | undefined;
}

const HEIGHT_PX = 220;
const TOP_PX = 12;
const BOTTOM_PX = 40;
/** The axis's least width; longer labels ("£1,000.00") widen it. */
const AXIS_MIN_PX = 52;
/** About the width of a character of an 11 px axis label (digits are the widest). */
const AXIS_CHAR_PX = 6.5;
/** Below this a bar is too thin to point at; the chart scrolls in its box instead. */
const MIN_SLOT_PX = 16;
/** Labels are skipped to keep them this far apart. */
const LABEL_SPACING_PX = 22;

/** The width of the box the chart sits in, followed as the window changes. */
function useWidth(fallbackPx: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [widthPx, setWidthPx] = useState(fallbackPx);
  useEffect(() => {
    const box = ref.current;
    if (box === null) return;
    const measure = () => {
      setWidthPx(box.clientWidth);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    return () => {
      observer.disconnect();
    };
  }, []);
  return { ref, widthPx };
}

/**
 * A bar chart in SVG with an optional budget line (a step per bar). To assistive technology it is one
 * image described by `summary`; the figures themselves are in a table beside it. Wider than its box
 * (many days on a phone), it scrolls sideways inside the box, never the page.
 */
export function BarChart(props: {
  readonly title: string;
  readonly summary: string;
  readonly bars: readonly ChartBar[];
  /** What the values count: the axis's labels read "1.5 mi", "20 km" or "£0.50". */
  readonly unit: AxisUnit;
  /** A bar's value in its tooltip, e.g. "12.3 miles" or "£1.20". */
  readonly format: (value: number) => string;
}) {
  const { title, summary, bars, unit, format } = props;
  const { ref, widthPx } = useWidth(300);
  // The axis stays put on the left; the plot beside it scrolls when its bars need more room than the box.
  const chartWidthPx = Math.max(widthPx, bars.length * MIN_SLOT_PX + 8);
  const slotPx = (chartWidthPx - 8) / Math.max(bars.length, 1);
  const plotPx = HEIGHT_PX - TOP_PX - BOTTOM_PX;

  const highest = Math.max(0, ...bars.map((b) => Math.max(b.value, b.budget ?? 0)));
  const axis = niceAxis(highest, 4, MIN_STEP[unit]);
  const labels = axisLabels(axis, unit);
  const axisPx = Math.max(
    AXIS_MIN_PX,
    Math.ceil(10 + AXIS_CHAR_PX * Math.max(...labels.map((label) => label.length))),
  );
  const y = (value: number) => TOP_PX + plotPx - (value / axis.top) * plotPx;
  const x = (index: number) => index * slotPx;
  const labelEvery = Math.max(1, Math.ceil(LABEL_SPACING_PX / slotPx));

  // The latest bars matter most: a chart wider than its box opens scrolled to its end.
  useEffect(() => {
    const box = ref.current;
    if (box !== null) box.scrollLeft = box.scrollWidth;
  }, [ref, bars.length, chartWidthPx]);

  // The budget as a step line: level across each bar's slot, joined where it changes.
  let budgetPath = '';
  bars.forEach((bar, index) => {
    if (bar.budget === undefined) return;
    const previous = bars[index - 1]?.budget;
    budgetPath += `${previous === undefined ? 'M' : 'L'}${x(index).toFixed(1)} ${y(bar.budget).toFixed(1)} H${x(index + 1).toFixed(1)} `;
  });

  return (
    <div className="chart-frame">
      <svg aria-hidden="true" width={axisPx} height={HEIGHT_PX} className="chart-axis">
        {axis.ticks.map((tick, index) => (
          <text key={tick} className="axis" x={axisPx - 6} y={y(tick) + 4} textAnchor="end">
            {labels[index]}
          </text>
        ))}
      </svg>
      <div
        className="chart-box"
        ref={ref}
        tabIndex={0}
        role="region"
        aria-label={`${title} (scrolls sideways)`}
      >
        <svg
          role="img"
          aria-label={summary}
          width={chartWidthPx}
          height={HEIGHT_PX}
          viewBox={`0 0 ${chartWidthPx} ${HEIGHT_PX}`}
          className="chart"
        >
          {axis.ticks.map((tick) => (
            <line key={tick} className="grid" x1={0} x2={chartWidthPx} y1={y(tick)} y2={y(tick)} />
          ))}
          {bars.map((bar, index) =>
            bar.value > 0 ? (
              <rect
                key={bar.key}
                className="bar"
                data-key={bar.key}
                x={x(index) + slotPx * 0.15}
                width={slotPx * 0.7}
                y={y(bar.value)}
                height={Math.max(1, y(0) - y(bar.value))}
              >
                <title>{`${bar.name}: ${format(bar.value)}`}</title>
              </rect>
            ) : null,
          )}
          {budgetPath === '' ? null : <path className="budget" d={budgetPath} />}
          {bars.map((bar, index) => {
            const first = index === 0 || bars[index - 1]?.group !== bar.group;
            // Counted from the end, so that today (or this month) always has its label.
            const labelled = (bars.length - 1 - index) % labelEvery === 0;
            if (!labelled && !first) return null;
            const middle = x(index) + slotPx / 2;
            return (
              <g key={bar.key}>
                {labelled ? (
                  <text className="axis" x={middle} y={HEIGHT_PX - BOTTOM_PX + 15} textAnchor="middle">
                    {bar.label}
                  </text>
                ) : null}
                {first && bar.group !== undefined ? (
                  <text className="axis group" x={x(index) + 2} y={HEIGHT_PX - 6}>
                    {bar.group}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
      </div>
    </div>
  );
}

/** The legend under a chart: what a bar is and, when drawn, what the dashed line is. */
export function ChartLegend({ bar, budget }: { readonly bar: string; readonly budget?: string | undefined }) {
  return (
    <ul className="chart-legend">
      <li>
        <span className="swatch swatch-bar" aria-hidden="true" /> {bar}
      </li>
      {budget === undefined ? null : (
        <li>
          <span className="swatch swatch-budget" aria-hidden="true" /> {budget}
        </li>
      )}
    </ul>
  );
}

/** The chart's figures as a table, folded away under a summary that any user can open. */
export function FiguresTable(props: {
  readonly caption: string;
  readonly headers: readonly string[];
  readonly rows: ReadonlyArray<{ readonly key: string; readonly cells: readonly string[] }>;
}) {
  const { caption, headers, rows } = props;
  return (
    <details className="figures">
      <summary>{caption} as a table</summary>
      <div className="table-box">
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {headers.map((header, index) => (
                <th key={header} scope="col" className={index === 0 ? undefined : 'number'}>
                  {header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                {row.cells.map((cell, index) =>
                  index === 0 ? (
                    <th key={index} scope="row">
                      {cell}
                    </th>
                  ) : (
                    <td key={index} className="number">
                      {cell}
                    </td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
