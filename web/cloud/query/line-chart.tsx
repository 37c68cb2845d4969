// A line chart in SVG (no chart library: a few hundred lines of Preact beat a dependency for lines,
// axes and a legend). Used by the query consoles, the tabular view and the training curves.
import type { Series } from './rows.js';

const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563', '#ca8a04'];
const WIDTH = 720;
const HEIGHT = 260;
const PAD = { left: 56, right: 12, top: 12, bottom: 28 };

function niceTicks(min: number, max: number, count: number): number[] {
  if (min === max) return [min];
  const raw = (max - min) / count;
  const step = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => s >= raw) ?? raw;
  const ticks = [];
  for (let v = Math.ceil(min / nice) * nice; v <= max + nice * 1e-9; v += nice) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function label(v: number, time: boolean, span: number): string {
  if (!time) return Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(1) : String(Number(v.toPrecision(4)));
  const iso = new Date(v).toISOString();
  return span > 86_400_000 ? iso.slice(5, 16).replace('T', ' ') : iso.slice(11, 19);
}

export function LineChart(props: { series: Series[]; timeX: boolean; xLabel?: string; testId?: string }) {
  const all = props.series.flatMap((s) => s.points);
  if (all.length === 0) return <p class="muted">Nothing to chart: pick a numeric column.</p>;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (WIDTH - PAD.left - PAD.right);
  const sy = (y: number) => HEIGHT - PAD.bottom - ((y - y0) / (y1 - y0)) * (HEIGHT - PAD.top - PAD.bottom);
  const xTicks = props.timeX ? niceTicks(x0, x1, 4) : niceTicks(x0, x1, 6);
  return (
    <figure class="chart" data-testid={props.testId}>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`chart of ${props.series.map((s) => s.column).join(', ')}`}>
        {niceTicks(y0, y1, 5).map((t) => (
          <g key={`y${t}`}>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={sy(t)} y2={sy(t)} stroke="#e5e7eb" />
            <text x={PAD.left - 4} y={sy(t) + 4} text-anchor="end" font-size="11">
              {label(t, false, 0)}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <text key={`x${t}`} x={sx(t)} y={HEIGHT - 8} text-anchor="middle" font-size="11">
            {label(t, props.timeX, x1 - x0)}
          </text>
        ))}
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={HEIGHT - PAD.bottom} y2={HEIGHT - PAD.bottom} stroke="#6b7280" />
        {props.series.map((s, i) => {
          const points = [...s.points].sort((a, b) => a[0] - b[0]);
          return (
            <g key={s.column}>
              <polyline
                fill="none"
                stroke={COLOURS[i % COLOURS.length]}
                stroke-width="1.5"
                points={points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}
              />
              {points.length <= 60 && points.map(([x, y]) => <circle key={x} cx={sx(x)} cy={sy(y)} r="2.5" fill={COLOURS[i % COLOURS.length]} />)}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {props.series.map((s, i) => (
          <span key={s.column} class="legend">
            <span class="swatch" style={{ background: COLOURS[i % COLOURS.length] }} /> {s.column} ({s.points.length})
          </span>
        ))}
        {props.xLabel && <span class="muted"> against {props.xLabel}</span>}
      </figcaption>
    </figure>
  );
}
