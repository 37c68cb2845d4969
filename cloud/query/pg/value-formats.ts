// The text and binary encodings of result values (protocol 3.0, "Formats and Format Codes" and each type's
// typsend). Values arrive as @duckdb/node-api's default JS values (DuckDB*Value objects for times,
// decimals, lists); column-writers.ts writes the common types straight from DuckDB's vectors instead and
// falls back to these for the rest.
import {
  DuckDBTypeId,
  type DuckDBType,
  type DuckDBValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBIntervalValue,
  DuckDBListValue,
  DuckDBArrayValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
} from '@duckdb/node-api';
import { Oid, ARRAY_OF, oidOf, PG_EPOCH_DAYS, PG_EPOCH_MICROS } from './pg-types.js';

export type TextEncoder = (v: DuckDBValue) => string;

function floatText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return String(v);
}

/** The text form PostgreSQL prints for a value of `oid` (DateStyle ISO, IntervalStyle postgres). */
export function textOf(v: DuckDBValue, type: DuckDBType): string {
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return type.typeId === DuckDBTypeId.FLOAT ? float4Text(v) : floatText(v);
  if (typeof v === 'bigint' || typeof v === 'string') return String(v);
  if (v instanceof DuckDBBlobValue) return `\\x${Buffer.from(v.bytes).toString('hex')}`;
  if (v instanceof DuckDBTimestampTZValue) return timestamptzText(v);
  if (v instanceof DuckDBIntervalValue) return intervalText(v);
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) {
    const child = (type as unknown as { valueType: DuckDBType }).valueType;
    if (ARRAY_OF[oidOf(child)] === undefined) return JSON.stringify(toJson(v));
    return `{${v.items.map((x) => (x === null ? 'NULL' : arrayElement(textOf(x, child)))).join(',')}}`;
  }
  if (v instanceof DuckDBStructValue || v instanceof DuckDBMapValue) return JSON.stringify(toJson(v));
  return String(v);
}

/** The shortest text that reads back as the same float4, as PostgreSQL prints it (extra_float_digits >= 1). */
function float4Text(v: number): string {
  if (!Number.isFinite(v)) return floatText(v);
  for (let p = 1; p <= 9; p++) {
    const s = Number(v.toPrecision(p));
    if (Math.fround(s) === v) return String(s);
  }
  return String(v);
}

function arrayElement(s: string): string {
  if (s === '' || /[{},"\\\s]/.test(s) || /^null$/i.test(s)) return `"${s.replace(/(["\\])/g, '\\$1')}"`;
  return s;
}

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]+00` as PostgreSQL prints timestamptz in UTC. Built from Date's ISO form,
 * which is several times faster than the generic conversion; years outside 1..9999 and infinities take
 * the generic path.
 */
function timestamptzText(v: DuckDBTimestampTZValue): string {
  const micros = v.micros;
  const ms = Math.floor(Number(micros) / 1000);
  // Date covers ±8.64e15 ms; beyond that (infinity is int64 max) the generic form.
  const iso = Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : '';
  if (iso.length !== 24 || iso.startsWith('0000')) return v.toString();
  const sub = Number(((micros % 1_000_000n) + 1_000_000n) % 1_000_000n);
  const frac = sub === 0 ? '' : `.${String(sub).padStart(6, '0').replace(/0+$/, '')}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac}+00`;
}

function intervalText(v: DuckDBIntervalValue): string {
  const parts: string[] = [];
  const years = Math.trunc(v.months / 12);
  const months = v.months % 12;
  if (years) parts.push(`${years} year${Math.abs(years) === 1 ? '' : 's'}`);
  if (months) parts.push(`${months} mon${Math.abs(months) === 1 ? '' : 's'}`);
  if (v.days) parts.push(`${v.days} day${Math.abs(v.days) === 1 ? '' : 's'}`);
  if (v.micros !== 0n || parts.length === 0) {
    const neg = v.micros < 0n;
    let us = neg ? -v.micros : v.micros;
    const h = us / 3_600_000_000n;
    us %= 3_600_000_000n;
    const m = us / 60_000_000n;
    us %= 60_000_000n;
    const s = us / 1_000_000n;
    us %= 1_000_000n;
    const frac = us ? `.${us.toString().padStart(6, '0').replace(/0+$/, '')}` : '';
    parts.push(`${neg ? '-' : ''}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${frac}`);
  }
  return parts.join(' ');
}

/** JSON for structs, maps and lists of non-scalar types (shown as jsonb). */
function toJson(v: DuckDBValue): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toJson);
  if (v instanceof DuckDBStructValue) return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, toJson(x)]));
  if (v instanceof DuckDBMapValue) return Object.fromEntries(v.entries.map((e) => [String(e.key), toJson(e.value)]));
  return String(v);
}

/** The binary (typsend) form of a value; types without one here are sent as their text bytes. */
export function binaryOf(v: DuckDBValue, type: DuckDBType, oid: number): Buffer {
  switch (oid) {
    case Oid.bool:
      return Buffer.from([v ? 1 : 0]);
    case Oid.int2: {
      const b = Buffer.alloc(2);
      b.writeInt16BE(Number(v));
      return b;
    }
    case Oid.int4: {
      const b = Buffer.alloc(4);
      b.writeInt32BE(Number(v));
      return b;
    }
    case Oid.int8: {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(BigInt(v as number | bigint));
      return b;
    }
    case Oid.float4: {
      const b = Buffer.alloc(4);
      b.writeFloatBE(Number(v));
      return b;
    }
    case Oid.float8: {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(Number(v));
      return b;
    }
    case Oid.bytea:
      return Buffer.from((v as DuckDBBlobValue).bytes);
    case Oid.date: {
      const b = Buffer.alloc(4);
      b.writeInt32BE((v as DuckDBDateValue).days - PG_EPOCH_DAYS);
      return b;
    }
    case Oid.timestamp:
    case Oid.timestamptz: {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE((v as DuckDBTimestampValue).micros - PG_EPOCH_MICROS);
      return b;
    }
    case Oid.interval: {
      const i = v as DuckDBIntervalValue;
      const b = Buffer.alloc(16);
      b.writeBigInt64BE(i.micros, 0);
      b.writeInt32BE(i.days, 8);
      b.writeInt32BE(i.months, 12);
      return b;
    }
    case Oid.uuid:
      return Buffer.from(String(v).replace(/-/g, ''), 'hex');
    case Oid.numeric:
      return numericBinary(textOf(v, type));
    case Oid.jsonb:
      return Buffer.concat([Buffer.from([1]), Buffer.from(textOf(v, type), 'utf8')]);
    default:
      if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return arrayBinary(v, type, oid);
      return Buffer.from(textOf(v, type), 'utf8');
  }
}

function arrayBinary(v: DuckDBListValue | DuckDBArrayValue, type: DuckDBType, oid: number): Buffer {
  const child = (type as unknown as { valueType: DuckDBType }).valueType;
  const childOid = Number(Object.entries(ARRAY_OF).find(([, a]) => a === oid)?.[0] ?? Oid.text);
  const head = Buffer.alloc(20);
  head.writeInt32BE(1, 0);
  head.writeInt32BE(v.items.some((x) => x === null) ? 1 : 0, 4);
  head.writeInt32BE(childOid, 8);
  head.writeInt32BE(v.items.length, 12);
  head.writeInt32BE(1, 16);
  const parts: Buffer[] = [head];
  for (const item of v.items) {
    const len = Buffer.alloc(4);
    if (item === null) {
      len.writeInt32BE(-1);
      parts.push(len);
      continue;
    }
    const body = binaryOf(item, child, childOid);
    len.writeInt32BE(body.length);
    parts.push(len, body);
  }
  return Buffer.concat(parts);
}

/** numeric_send: base-10000 digits with a weight, sign and display scale. */
function numericBinary(text: string): Buffer {
  const head = Buffer.alloc(8);
  if (text === 'NaN') {
    head.writeUInt16BE(0xc000, 4);
    return head;
  }
  const neg = text.startsWith('-');
  const [int, frac = ''] = text.replace(/^[-+]/, '').split('.');
  const intPadded = int.replace(/^0+/, '').padStart(Math.ceil(int.replace(/^0+/, '').length / 4) * 4, '0');
  const fracPadded = frac.padEnd(Math.ceil(frac.length / 4) * 4, '0');
  const digits: number[] = [];
  for (let i = 0; i < intPadded.length; i += 4) digits.push(Number(intPadded.slice(i, i + 4)));
  let weight = digits.length - 1;
  for (let i = 0; i < fracPadded.length; i += 4) digits.push(Number(fracPadded.slice(i, i + 4)));
  while (digits.length && digits[0] === 0) {
    digits.shift();
    weight--;
  }
  while (digits.length && digits[digits.length - 1] === 0) digits.pop();
  const b = Buffer.alloc(8 + 2 * digits.length);
  b.writeInt16BE(digits.length, 0);
  b.writeInt16BE(digits.length ? weight : 0, 2);
  b.writeUInt16BE(neg ? 0x4000 : 0, 4);
  b.writeInt16BE(frac.length, 6);
  digits.forEach((d, i) => b.writeInt16BE(d, 8 + 2 * i));
  return b;
}
