import { useRef } from 'react';
import { formatTick, niceAxis } from '../../../shared/axis-ticks.ts';
import { loadPlaces } from '../../../shared/map/places.ts';
import { RouteMap, useWidthPx } from '../../../shared/map/route-map.tsx';
import type { Claim } from '../api-types.ts';
import { useConsole } from '../console-context.tsx';
import { TableBox } from '../ui.tsx';

type CrashFile = NonNullable<Claim['crash_file']>;
type TracePoint = CrashFile['positions'][number];

const HEIGHT_PX = 220;
const TOP_PX = 14;
const BOTTOM_PX = 36;
const LEFT_PX = 56;
const RIGHT_PX = 12;

/** Seconds from the impact, signed: "−12 s", "0 s", "+8 s". */
const offsetLabel = (seconds: number): string =>
  seconds === 0 ? '0 s' : `${seconds < 0 ? '−' : '+'}${String(Math.abs(seconds))} s`;

/** "12 s before", "at the impact", "8 s after". */
const offsetWords = (seconds: number): string =>
  seconds === 0 ? 'at the impact' : `${String(Math.abs(seconds))} s ${seconds < 0 ? 'before' : 'after'}`;

const kmh = (speed: number): string => `${formatTick(speed, speed % 1 === 0 ? 0 : 1)} km/h`;

/**
 * The crash file: the positions from before to after the impact on a map with the impact marked, and
 * the speed over the same seconds as a chart (with its figures in a table, for a screen reader).
 */
export function CrashFilePanel({ claim, crash }: { readonly claim: Claim; readonly crash: CrashFile }) {
  const { config } = useConsole();
  const impactS = Math.floor(Date.parse(claim.occurred_at) / 1000);
  const positions = crash.positions;
  const points: number[] = positions.flatMap((p) => [p.lat, p.lon]);
  // With fewer than two fixes the map still shows where it happened: the impact alone, drawn as a point.
  if (points.length < 4 && claim.lat !== null && claim.lon !== null)
    points.splice(0, points.length, claim.lat, claim.lon, claim.lat, claim.lon);
  const first = positions[0];
  const last = positions.at(-1);
  return (
    <>
      <dl className="facts">
        <dt>Peak acceleration</dt>
        <dd>{crash.peak_acceleration_g === null ? '—' : `${formatTick(crash.peak_acceleration_g, 1)} g`}</dd>
        <dt>Change of velocity</dt>
        <dd>{crash.delta_v_kmh === null ? '—' : kmh(crash.delta_v_kmh)}</dd>
        <dt>Airbag</dt>
        <dd>
          {crash.airbag_deployed === null
            ? 'Not reported'
            : crash.airbag_deployed
              ? 'Deployed'
              : 'Not deployed'}
        </dd>
        <dt>From</dt>
        <dd>
          {crash.source === 'detected' ? 'Detected from the positions' : 'Reported by the device'} (
          {crash.device_id})
        </dd>
        <dt>Positions</dt>
        <dd data-testid="crash-positions">
          {positions.length}{' '}
          {crash.complete ? '' : '(still arriving: the file completes 40 s after the impact)'}
        </dd>
      </dl>
      {points.length < 4 ? (
        <p className="empty">No place was recorded for this crash.</p>
      ) : (
        <div data-testid="crash-map">
          <RouteMap
            points={points}
            startName={first === undefined ? 'Impact' : offsetWords(first.time - impactS)}
            endName={last === undefined ? 'Impact' : offsetWords(last.time - impactS)}
            tileUrl={config.map_tile_url}
            places={loadPlaces}
            unit="km"
            mark={
              claim.lat === null || claim.lon === null
                ? undefined
                : { lat: claim.lat, lon: claim.lon, name: 'Impact' }
            }
          />
        </div>
      )}
      <h3>Speed</h3>
      {positions.some((p) => p.speed_kmh !== null) ? (
        <SpeedTrace positions={positions} impactS={impactS} />
      ) : (
        <p className="empty">The positions carry no speed.</p>
      )}
    </>
  );
}

/** What the chart says to a screen reader: the speeds before, at and after the impact. */
function summaryOf(trace: readonly { t: number; speed: number }[]): string {
  const before = trace[0];
  const after = trace.at(-1);
  const atImpact = trace.reduce<{ t: number; speed: number } | undefined>(
    (best, p) => (best === undefined || Math.abs(p.t) < Math.abs(best.t) ? p : best),
    undefined,
  );
  const top = Math.max(...trace.map((p) => p.speed));
  if (before === undefined || after === undefined || atImpact === undefined) return 'No speeds recorded';
  return (
    `Speed against time around the impact: ${kmh(before.speed)} ${offsetWords(before.t)}, ` +
    `${kmh(atImpact.speed)} ${offsetWords(atImpact.t)}, ${kmh(after.speed)} ${offsetWords(after.t)}; ` +
    `highest ${kmh(top)}.`
  );
}

/** Speed (km/h) against seconds from the impact, the impact a line across; the figures in a table below. */
function SpeedTrace({
  positions,
  impactS,
}: {
  readonly positions: readonly TracePoint[];
  readonly impactS: number;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // 0 until the box is measured; a chart narrower than 240 px could not be read.
  const widthPx = Math.max(240, useWidthPx(ref) || 480);
  const trace = positions.flatMap((p) =>
    p.speed_kmh === null ? [] : [{ t: p.time - impactS, speed: p.speed_kmh }],
  );
  const axis = niceAxis(Math.max(...trace.map((p) => p.speed)), 4, 1);
  const fromS = Math.min(-60, ...trace.map((p) => p.t));
  const toS = Math.max(30, ...trace.map((p) => p.t));
  const plotW = widthPx - LEFT_PX - RIGHT_PX;
  const plotH = HEIGHT_PX - TOP_PX - BOTTOM_PX;
  const x = (t: number) => LEFT_PX + ((t - fromS) / (toS - fromS)) * plotW;
  const y = (speed: number) => TOP_PX + plotH - (speed / axis.top) * plotH;
  const line = trace
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)} ${y(p.speed).toFixed(1)}`)
    .join('');
  const timeTicks: number[] = [];
  for (let t = Math.ceil(fromS / 15) * 15; t <= toS; t += 15) timeTicks.push(t);
  return (
    <>
      <div ref={ref} className="speed-trace">
        <svg
          role="img"
          aria-label={summaryOf(trace)}
          data-testid="speed-trace"
          width={widthPx}
          height={HEIGHT_PX}
          viewBox={`0 0 ${String(widthPx)} ${String(HEIGHT_PX)}`}
          className="chart"
        >
          {axis.ticks.map((tick) => (
            <g key={tick}>
              <line className="grid" x1={LEFT_PX} x2={widthPx - RIGHT_PX} y1={y(tick)} y2={y(tick)} />
              <text className="axis" x={LEFT_PX - 6} y={y(tick) + 4} textAnchor="end">
                {formatTick(tick, axis.decimals)}
              </text>
            </g>
          ))}
          {timeTicks.map((t) => (
            <text
              key={t}
              className="axis"
              x={x(t)}
              y={HEIGHT_PX - BOTTOM_PX + 16}
              // The last label ends at the plot's edge rather than running off it.
              textAnchor={t === toS ? 'end' : 'middle'}
            >
              {offsetLabel(t)}
            </text>
          ))}
          <text className="axis" x={4} y={TOP_PX - 2}>
            km/h
          </text>
          <text className="axis" x={widthPx - RIGHT_PX} y={HEIGHT_PX - 4} textAnchor="end">
            seconds from the impact
          </text>
          <line
            className="impact"
            x1={x(0)}
            x2={x(0)}
            y1={TOP_PX}
            y2={TOP_PX + plotH}
            data-testid="speed-impact"
          />
          <text className="impact-label" x={x(0) + 4} y={TOP_PX + 10}>
            Impact
          </text>
          <path className="speed" d={line} />
        </svg>
      </div>
      <details className="speed-figures">
        <summary>The speeds as a table</summary>
        <TableBox label="Speed around the impact">
          <table className="grid">
            <thead>
              <tr>
                <th scope="col">From the impact</th>
                <th scope="col" className="number">
                  Speed
                </th>
              </tr>
            </thead>
            <tbody>
              {trace.map((p, index) => (
                <tr key={`${String(p.t)}-${String(index)}`}>
                  <th scope="row">{offsetLabel(p.t)}</th>
                  <td className="number">{kmh(p.speed)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      </details>
    </>
  );
}
