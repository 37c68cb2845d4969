// A sensor's readings as people read them: each number with 4 significant digits and a plot of its last
// minute (its own axis, so a temperature near 21 is not a flat line under a humidity near 40), then the
// whole reading as JSON with the same rounding (the raw floats had 14 decimals).
import { useEffect, useRef, useState } from 'preact/hooks';
import { sensorApi } from './api.js';
import { Failure } from './action.js';
import { POLL_MS, usePoll } from './poll.js';

/** Samples kept per value: a minute at the poll rate. */
const HISTORY = Math.round(60_000 / POLL_MS);

/** Rounds every number in a reading to 4 significant digits (integers stay as they are). */
export function rounded(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(4));
  if (Array.isArray(value)) return value.map(rounded);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]));
  return value;
}

/** The numbers of a reading by dotted path (`position.x`). */
export function numbersOf(value: unknown, path = ''): [string, number][] {
  if (typeof value === 'number' && Number.isFinite(value)) return [[path, value]];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([k, v]) => numbersOf(v, path ? `${path}.${k}` : k));
  }
  return [];
}

function Plot({ name, samples }: { name: string; samples: number[] }) {
  const [w, h] = [240, 40];
  const min = Math.min(...samples);
  const max = Math.max(...samples);
  const span = max - min || 1;
  const points = samples.map((v, i) => `${((i / (HISTORY - 1)) * w).toFixed(1)},${(h - 2 - ((v - min) / span) * (h - 4)).toFixed(1)}`).join(' ');
  return (
    <svg class="sparkline" viewBox={`0 0 ${w} ${h}`} width={w} height={h} data-testid={`plot-${name}`} data-points={samples.length}>
      <polyline points={points} fill="none" stroke="#1f6feb" stroke-width="1.5" />
      <text x={w - 2} y={10} text-anchor="end" font-size="9" fill="#666">
        {String(rounded(max))}
      </text>
      <text x={w - 2} y={h - 2} text-anchor="end" font-size="9" fill="#666">
        {String(rounded(min))}
      </text>
    </svg>
  );
}

export function SensorPanel({ name }: { name: string }) {
  const readings = usePoll((signal) => sensorApi.getReadings({ name }, signal), [name]);
  const history = useRef(new Map<string, number[]>());
  const [, setTick] = useState(0);
  const value = readings.value?.readings;
  useEffect(() => {
    if (!value) return;
    const numbers = numbersOf(value);
    for (const [path, n] of numbers) {
      const samples = history.current.get(path) ?? [];
      samples.push(n);
      if (samples.length > HISTORY) samples.shift();
      history.current.set(path, samples);
    }
    setTick((t) => t + 1);
  }, [value]);
  const numbers = value ? numbersOf(value) : [];
  return (
    <div>
      {numbers.length > 0 && (
        <table class="readings" data-testid={`values-${name}`}>
          <tbody>
            {numbers.map(([path, n]) => (
              <tr key={path}>
                <th>{path}</th>
                <td class="value">{String(rounded(n))}</td>
                <td>
                  <Plot name={`${name}-${path}`} samples={history.current.get(path) ?? [n]} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <pre data-testid={`readings-${name}`}>{value ? JSON.stringify(rounded(value), null, 1) : '…'}</pre>
      <Failure text={readings.error} />
    </div>
  );
}
