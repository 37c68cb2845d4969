// The unit of a charted column, so that readings of different units never share a y-axis (a temperature
// of 20 drawn under a humidity of 80 was a flat line). A reading's unit is read from its name: a
// bracketed unit at the end (`pressure (hPa)`, `t[C]`) or a known unit suffix (`temperature_c`,
// `humidity_pct`, `speed_mps`). A name without one is taken as its own quantity: `readings.temperature`
// and `readings.humidity` get two axes, the same reading of two components (`a.temperature`,
// `b.temperature`) one.
import type { Series } from './rows.js';

const SUFFIXES: Record<string, string> = {
  c: '°C',
  degc: '°C',
  celsius: '°C',
  f: '°F',
  degf: '°F',
  fahrenheit: '°F',
  k: 'K',
  kelvin: 'K',
  pct: '%',
  percent: '%',
  m: 'm',
  cm: 'cm',
  mm: 'mm',
  km: 'km',
  s: 's',
  sec: 's',
  ms: 'ms',
  us: 'µs',
  mps: 'm/s',
  kmh: 'km/h',
  v: 'V',
  mv: 'mV',
  a: 'A',
  ma: 'mA',
  w: 'W',
  kw: 'kW',
  wh: 'Wh',
  kwh: 'kWh',
  j: 'J',
  hz: 'Hz',
  khz: 'kHz',
  rpm: 'rpm',
  deg: '°',
  rad: 'rad',
  pa: 'Pa',
  hpa: 'hPa',
  kpa: 'kPa',
  bar: 'bar',
  lux: 'lx',
  lx: 'lx',
  db: 'dB',
  dbm: 'dBm',
  ppm: 'ppm',
  g: 'g',
  kg: 'kg',
};

/** The axis a column is drawn on: `key` groups columns, `label` titles the axis. */
export interface Unit {
  key: string;
  label: string;
}

export function unitOf(column: string): Unit {
  const name = column.slice(column.lastIndexOf('.') + 1);
  const bracketed = /[([]\s*([^)\]]+?)\s*[)\]]\s*$/.exec(name);
  if (bracketed) return { key: `unit:${bracketed[1]}`, label: bracketed[1] };
  const suffix = /[_-]([a-z]+)$/i.exec(name);
  const symbol = suffix && SUFFIXES[suffix[1].toLowerCase()];
  if (symbol) return { key: `unit:${symbol}`, label: symbol };
  return { key: `name:${name}`, label: name };
}

export interface Axis {
  unit: Unit;
  series: Series[];
}

/** The series grouped by unit, axes in the order their first series came. */
export function axesOf(series: Series[]): Axis[] {
  const axes = new Map<string, Axis>();
  for (const s of series) {
    const unit = unitOf(s.column);
    const axis = axes.get(unit.key) ?? axes.set(unit.key, { unit, series: [] }).get(unit.key)!;
    axis.series.push(s);
  }
  return [...axes.values()];
}
