// A line chart in SVG (no chart library: a few hundred lines of Preact beat a dependency for lines,
// axes and a legend). Used by the query consoles, the tabular view and the training curves. Series of
// different units never share a y-axis: each unit gets its own panel with its own y range and an axis
// titled with the unit (units.ts), the panels stacked over one shared x range.
import type { Series } from './rows.js';
import { axesOf, type Axis } from './units.js';

const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563', '#ca8a04'];
const WIDTH = 720;
const HEIGHT = 260;
/** The height of each panel when there are several units. */
const PANEL_HEIGHT = 170;
const PAD = { left: 64, right: 12, top: 12, bottom: 28 };

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

const range = (values: number[]): [number, number] => {
  const [lo, hi] = [Math.min(...values), Math.max(...values)];
  return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
};

/** One unit's panel: its own y range and axis title, the chart's x range. */
function Panel(props: { axis: Axis; colourOf(column: string): string; x: [number, number]; timeX: boolean; height: number; titled: boolean }) {
  const { axis, height } = props;
  const [x0, x1] = props.x;
  const [y0, y1] = range(axis.series.flatMap((s) => s.points.map((p) => p[1])));
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * (WIDTH - PAD.left - PAD.right);
  const sy = (y: number) => height - PAD.bottom - ((y - y0) / (y1 - y0)) * (height - PAD.top - PAD.bottom);
  const xTicks = props.timeX ? niceTicks(x0, x1, 4) : niceTicks(x0, x1, 6);
  return (
    <svg
      viewBox={`0 0 ${WIDTH} ${height}`}
      role="img"
      data-testid="chart-axis"
      data-unit={axis.unit.label}
      aria-label={`chart of ${axis.series.map((s) => s.column).join(', ')}${props.titled ? ` in ${axis.unit.label}` : ''}`}
    >
      {props.titled && (
        <text
          x={12}
          y={(height - PAD.bottom + PAD.top) / 2}
          font-size="11"
          text-anchor="middle"
          transform={`rotate(-90 12 ${(height - PAD.bottom + PAD.top) / 2})`}
        >
          {axis.unit.label}
        </text>
      )}
      {niceTicks(y0, y1, height > 200 ? 5 : 3).map((t) => (
        <g key={`y${t}`}>
          <line x1={PAD.left} x2={WIDTH - PAD.right} y1={sy(t)} y2={sy(t)} stroke="#e5e7eb" />
          <text x={PAD.left - 4} y={sy(t) + 4} text-anchor="end" font-size="11">
            {label(t, false, 0)}
          </text>
        </g>
      ))}
      {xTicks.map((t) => (
        <text key={`x${t}`} x={sx(t)} y={height - 8} text-anchor="middle" font-size="11">
          {label(t, props.timeX, x1 - x0)}
        </text>
      ))}
      <line x1={PAD.left} x2={WIDTH - PAD.right} y1={height - PAD.bottom} y2={height - PAD.bottom} stroke="#6b7280" />
      {axis.series.map((s) => {
        const points = [...s.points].sort((a, b) => a[0] - b[0]);
        const colour = props.colourOf(s.column);
        return (
          <g key={s.column}>
            <polyline fill="none" stroke={colour} stroke-width="1.5" points={points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')} />
            {points.length <= 60 && points.map(([x, y]) => <circle key={x} cx={sx(x)} cy={sy(y)} r="2.5" fill={colour} />)}
          </g>
        );
      })}
    </svg>
  );
}

export function LineChart(props: { series: Series[]; timeX: boolean; xLabel?: string; testId?: string }) {
  const all = props.series.flatMap((s) => s.points);
  if (all.length === 0) return <p class="muted">Nothing to chart: pick a numeric column.</p>;
  const x = range(all.map((p) => p[0]));
  const axes = axesOf(props.series.filter((s) => s.points.length > 0));
  const colourOf = (column: string) => COLOURS[props.series.findIndex((s) => s.column === column) % COLOURS.length];
  const several = axes.length > 1;
  return (
    <figure class="chart" data-testid={props.testId}>
      {axes.map((axis) => (
        <Panel
          key={axis.unit.key}
          axis={axis}
          colourOf={colourOf}
          x={x}
          timeX={props.timeX}
          height={several ? PANEL_HEIGHT : HEIGHT}
          titled={several || axis.unit.key.startsWith('unit:')}
        />
      ))}
      <figcaption>
        {props.series.map((s) => (
          <span key={s.column} class="legend">
            <span class="swatch" style={{ background: colourOf(s.column) }} /> {s.column} ({s.points.length})
          </span>
        ))}
        {props.xLabel && <span class="muted"> against {props.xLabel}</span>}
      </figcaption>
    </figure>
  );
}
