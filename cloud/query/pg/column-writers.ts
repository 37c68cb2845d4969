// Row encoding straight from DuckDB's vectors. The generic path (chunk.getColumnValues, then textOf) makes
// one JS object per value (a DuckDBTimestampTZValue, a decoded string) and formats it through Date; for a
// large SELECT that, and the garbage it leaves, was most of the endpoint's CPU. For the common scalar types
// a writer here reads the vector's typed array (or the 16-byte inline string) and writes the field's bytes
// into the DataRow batch directly. Everything else, and any vector whose shape is not the one expected of
// the pinned @duckdb/node-api, takes the generic path, so the output is the same either way (the tests
// compare both on every fast type).
import type { DuckDBDataChunk, DuckDBType, DuckDBValue, DuckDBVector } from '@duckdb/node-api';
import { DuckDBTypeId } from '@duckdb/node-api';
import { Oid } from './pg-types.js';
import { binaryOf, textOf } from './value-formats.js';
import type { DataRowBatch } from './wire-messages.js';

/** Writes row `row` of one column (the value, or NULL) into the current DataRow. */
export type ColumnWriter = (batch: DataRowBatch, row: number) => void;

/** The writers of one chunk's columns, each for its column's type, oid and result format (0 text, 1 binary). */
export function chunkWriters(chunk: DuckDBDataChunk, types: readonly DuckDBType[], oids: readonly number[], formats: readonly number[]): ColumnWriter[] {
  const out: ColumnWriter[] = [];
  for (let c = 0; c < types.length; c++) {
    const vector = chunk.getColumnVector(c);
    out.push(fastWriter(vector, types[c], oids[c], formats[c]) ?? genericWriter(vector, types[c], oids[c], formats[c]));
  }
  return out;
}

function genericWriter(vector: DuckDBVector, type: DuckDBType, oid: number, format: number): ColumnWriter {
  if (format === 1)
    return (b, r) => {
      const v = vector.getItem(r) as DuckDBValue;
      if (v === null || v === undefined) b.nullValue();
      else b.bytes(binaryOf(v, type, oid));
    };
  return (b, r) => {
    const v = vector.getItem(r) as DuckDBValue;
    if (v === null || v === undefined) b.nullValue();
    else b.text(textOf(v, type));
  };
}

/** The private fields of the pinned @duckdb/node-api's vectors that the fast writers read. */
interface RawVector {
  items?: unknown;
  dataView?: unknown;
  validity?: { data: BigUint64Array | null; offset: number };
}

/** The validity mask as bytes (bit i of the mask = row i is not NULL), or undefined when every row is valid. */
function validityBytes(raw: RawVector): Uint8Array | undefined | false {
  const v = raw.validity;
  if (!v || typeof v.offset !== 'number' || v.offset !== 0) return false;
  if (v.data === null) return undefined;
  if (!(v.data instanceof BigUint64Array)) return false;
  return new Uint8Array(v.data.buffer, v.data.byteOffset, v.data.byteLength);
}

const isNull = (valid: Uint8Array | undefined, r: number) => valid !== undefined && ((valid[r >> 3] >> (r & 7)) & 1) === 0;

/** The fast writer of a column, or undefined when the generic path must write it (exported for its test). */
export function fastWriter(vector: DuckDBVector, type: DuckDBType, oid: number, format: number): ColumnWriter | undefined {
  const raw = vector as unknown as RawVector;
  const valid = validityBytes(raw);
  if (valid === false) return undefined;
  const binary = format === 1;
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR: {
      if (!(raw.dataView instanceof DataView)) return undefined;
      if (binary && oid !== Oid.text && oid !== Oid.jsonb) return undefined;
      const view = raw.dataView;
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      // jsonb's binary form is a version byte (1) before the text.
      const prefix = binary && oid === Oid.jsonb ? 1 : -1;
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        const at = r * 16;
        const len = view.getUint32(at, true);
        // Strings of up to 12 bytes are inline in the vector; longer ones live behind a pointer.
        if (len <= 12) b.rawField(bytes, at + 4, len, prefix);
        else b.textField(vector.getItem(r) as string, prefix);
      };
    }
    case DuckDBTypeId.TIMESTAMP_TZ:
    case DuckDBTypeId.TIMESTAMP: {
      if (!(raw.items instanceof BigInt64Array)) return undefined;
      const words = new Int32Array(raw.items.buffer, raw.items.byteOffset, raw.items.length * 2);
      const suffix = type.typeId === DuckDBTypeId.TIMESTAMP_TZ;
      const generic = genericWriter(vector, type, oid, format);
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        // int64 micros from two 32-bit halves (little-endian), exact while |micros| < 2^53 (1685..2255).
        const micros = words[2 * r + 1] * 4294967296 + (words[2 * r] >>> 0);
        if (!Number.isSafeInteger(micros)) return generic(b, r);
        if (binary) return b.int64Field(micros - PG_EPOCH_MICROS);
        if (!writeTimestampText(b, micros, suffix)) generic(b, r);
      };
    }
    case DuckDBTypeId.DOUBLE: {
      if (!(raw.items instanceof Float64Array)) return undefined;
      const items = raw.items;
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        const v = items[r];
        if (binary) b.float64Field(v);
        else if (!writeShortDecimal(b, v))
          b.asciiField(v === v && v !== Infinity && v !== -Infinity ? String(v) : v === v ? (v > 0 ? 'Infinity' : '-Infinity') : 'NaN');
      };
    }
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.SMALLINT: {
      const items = raw.items;
      if (!(items instanceof Int32Array || items instanceof Int16Array)) return undefined;
      const size = oid === Oid.int2 ? 2 : 4;
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        if (binary) b.intField(items[r], size);
        else b.asciiField(String(items[r]));
      };
    }
    case DuckDBTypeId.BIGINT: {
      if (!(raw.items instanceof BigInt64Array)) return undefined;
      const words = new Int32Array(raw.items.buffer, raw.items.byteOffset, raw.items.length * 2);
      const items = raw.items;
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        if (binary) return b.int64Words(words[2 * r + 1], words[2 * r]);
        const n = words[2 * r + 1] * 4294967296 + (words[2 * r] >>> 0);
        b.asciiField(Number.isSafeInteger(n) ? String(n) : String(items[r]));
      };
    }
    case DuckDBTypeId.BOOLEAN: {
      if (!(raw.dataView instanceof DataView)) return undefined;
      const view = raw.dataView;
      return (b, r) => {
        if (isNull(valid, r)) return b.nullValue();
        const t = view.getUint8(r) !== 0;
        if (binary) b.intField(t ? 1 : 0, 1);
        else b.asciiField(t ? 't' : 'f');
      };
    }
    default:
      return undefined;
  }
}

const PG_EPOCH_MICROS = 946_684_800_000_000; // 2000-01-01 in microseconds since 1970-01-01

/** `YYYY-MM-DD HH:MM:SS[.ffffff][+00]`; the date part is cached per day, since results are mostly ordered in time. */
let cachedDay = NaN;
let cachedDate = '';

function writeTimestampText(b: DataRowBatch, micros: number, tz: boolean): boolean {
  const sec = Math.floor(micros / 1e6);
  const frac = micros - sec * 1e6;
  const day = Math.floor(sec / 86400);
  if (day !== cachedDay) {
    const iso = new Date(day * 86_400_000).toISOString();
    // Years outside 0001..9999 (and BC) take the generic path.
    if (iso.length !== 24 || iso.startsWith('0000')) return false;
    cachedDay = day;
    cachedDate = iso.slice(0, 10);
  }
  const sod = sec - day * 86400;
  const h = Math.floor(sod / 3600);
  const m = Math.floor((sod - h * 3600) / 60);
  const s = sod - h * 3600 - m * 60;
  b.timestampField(cachedDate, h, m, s, frac, tz);
  return true;
}

const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);

/**
 * Writes a double of at most 15 significant digits between 1e-6 and 1e15 (sensor readings such as 21.5)
 * exactly as String(v) prints it, without making the string: String() was a quarter of the endpoint's time
 * in a large SELECT. It finds the fewest fraction digits k for which the decimal round(|v| * 10^k) / 10^k is
 * v itself; n / 10^k is correctly rounded (both are exact doubles), so the test is exact, and a decimal of at
 * most 15 significant digits is the only one of its length that is v, which makes it String's shortest
 * round-trip digits. Anything else (zero, 16-17 digits, exponent notation, NaN, infinities) returns false
 * and is written through String.
 */
export function writeShortDecimal(b: DataRowBatch, v: number): boolean {
  const a = v < 0 ? -v : v;
  if (!(a >= 1e-6 && a < 1e15)) return false;
  for (let k = 0; k < POW10.length; k++) {
    const n = Math.round(a * POW10[k]);
    if (n >= 1e15) return false;
    if (n / POW10[k] === a) {
      b.decimalField(v < 0, n, k);
      return true;
    }
  }
  return false;
}
