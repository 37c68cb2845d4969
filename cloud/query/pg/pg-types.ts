// PostgreSQL's view of DuckDB results and parameters: the type OID each DuckDB type is shown as, and the
// text and binary encodings of values (protocol 3.0, "Formats and Format Codes" and each type's
// typsend/typreceive). Values arrive as @duckdb/node-api's default JS values (DuckDB*Value objects for
// times, decimals, lists), so each column gets one encoder chosen once from its type, not per value.
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
  DuckDBUUIDValue,
  BIGINT,
  BLOB,
  BOOLEAN,
  DATE,
  DOUBLE,
  FLOAT,
  INTEGER,
  SMALLINT,
  TIMESTAMP,
  TIMESTAMPTZ,
  UUID,
  VARCHAR,
  INTERVAL,
  LIST,
  listValue,
} from '@duckdb/node-api';
import { invalidArgument } from '../../../core/shared/status-error.js';

/** pg_type OIDs of the types the endpoint speaks. */
export const Oid = {
  bool: 16,
  bytea: 17,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  unknown: 705,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
  boolArray: 1000,
  byteaArray: 1001,
  int2Array: 1005,
  int4Array: 1007,
  textArray: 1009,
  varcharArray: 1015,
  int8Array: 1016,
  float4Array: 1021,
  float8Array: 1022,
  jsonArray: 199,
  jsonbArray: 3807,
  timestampArray: 1115,
  timestamptzArray: 1185,
  dateArray: 1182,
  numericArray: 1231,
  uuidArray: 2951,
  intervalArray: 1187,
} as const;

const ARRAY_OF: Record<number, number> = {
  [Oid.bool]: Oid.boolArray,
  [Oid.bytea]: Oid.byteaArray,
  [Oid.int2]: Oid.int2Array,
  [Oid.int4]: Oid.int4Array,
  [Oid.text]: Oid.textArray,
  [Oid.varchar]: Oid.varcharArray,
  [Oid.int8]: Oid.int8Array,
  [Oid.float4]: Oid.float4Array,
  [Oid.float8]: Oid.float8Array,
  [Oid.json]: Oid.jsonArray,
  [Oid.jsonb]: Oid.jsonbArray,
  [Oid.timestamp]: Oid.timestampArray,
  [Oid.timestamptz]: Oid.timestamptzArray,
  [Oid.date]: Oid.dateArray,
  [Oid.numeric]: Oid.numericArray,
  [Oid.uuid]: Oid.uuidArray,
  [Oid.interval]: Oid.intervalArray,
};

/** pg_type names, for format_type and the catalog. */
export const TYPE_NAMES: Record<number, string> = {
  [Oid.bool]: 'boolean',
  [Oid.bytea]: 'bytea',
  [Oid.int8]: 'bigint',
  [Oid.int2]: 'smallint',
  [Oid.int4]: 'integer',
  [Oid.text]: 'text',
  [Oid.json]: 'json',
  [Oid.float4]: 'real',
  [Oid.float8]: 'double precision',
  [Oid.varchar]: 'character varying',
  [Oid.date]: 'date',
  [Oid.time]: 'time without time zone',
  [Oid.timestamp]: 'timestamp without time zone',
  [Oid.timestamptz]: 'timestamp with time zone',
  [Oid.interval]: 'interval',
  [Oid.numeric]: 'numeric',
  [Oid.uuid]: 'uuid',
  [Oid.jsonb]: 'jsonb',
  [Oid.name]: 'name',
  [Oid.oid]: 'oid',
};

/** The OID a DuckDB result type is shown as. JSON is shown as jsonb: it is what a PostgreSQL schema would use. */
export function oidOf(type: DuckDBType): number {
  if (type.alias === 'JSON') return Oid.jsonb;
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return Oid.bool;
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.UTINYINT:
      return Oid.int2;
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.USMALLINT:
      return Oid.int4;
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return Oid.int8;
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.DECIMAL:
    case DuckDBTypeId.BIGNUM:
      return Oid.numeric;
    case DuckDBTypeId.FLOAT:
      return Oid.float4;
    case DuckDBTypeId.DOUBLE:
      return Oid.float8;
    case DuckDBTypeId.VARCHAR:
      return Oid.text;
    case DuckDBTypeId.BLOB:
      return Oid.bytea;
    case DuckDBTypeId.DATE:
      return Oid.date;
    case DuckDBTypeId.TIME:
      return Oid.time;
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return Oid.timestamp;
    case DuckDBTypeId.TIMESTAMP_TZ:
      return Oid.timestamptz;
    case DuckDBTypeId.INTERVAL:
      return Oid.interval;
    case DuckDBTypeId.UUID:
      return Oid.uuid;
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const child = (type as unknown as { valueType: DuckDBType }).valueType;
      return ARRAY_OF[oidOf(child)] ?? Oid.jsonb;
    }
    case DuckDBTypeId.STRUCT:
    case DuckDBTypeId.MAP:
    case DuckDBTypeId.UNION:
      return Oid.jsonb;
    case DuckDBTypeId.SQLNULL:
      return Oid.text;
    default:
      return Oid.text;
  }
}

/** typlen as RowDescription reports it (-1 for variable length). */
export function typeSize(oid: number): number {
  switch (oid) {
    case Oid.bool:
      return 1;
    case Oid.int2:
      return 2;
    case Oid.int4:
    case Oid.float4:
    case Oid.date:
      return 4;
    case Oid.int8:
    case Oid.float8:
    case Oid.timestamp:
    case Oid.timestamptz:
    case Oid.time:
      return 8;
    case Oid.interval:
    case Oid.uuid:
      return 16;
    default:
      return -1;
  }
}

const PG_EPOCH_DAYS = 10957; // 2000-01-01 in days since 1970-01-01
const PG_EPOCH_MICROS = BigInt(PG_EPOCH_DAYS) * 86_400_000_000n;

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

/** A bound parameter: a DuckDB value and the DuckDB type to bind it as (undefined = let DuckDB infer). */
export interface BoundParameter {
  value: DuckDBValue;
  type?: DuckDBType;
}

/**
 * Decodes one Bind parameter. Text parameters of unspecified or textual type are bound as VARCHAR and
 * DuckDB casts them to what the statement needs (as PostgreSQL does with `unknown`); typed ones are
 * decoded to the matching DuckDB type so `$1::int8` and JDBC's setLong keep their exact value.
 */
export function decodeParameter(raw: Buffer | null, oid: number, binary: boolean, index: number): BoundParameter {
  if (raw === null) return { value: null };
  const field = `parameter $${index + 1}`;
  const bad = (rule: string) => invalidArgument(`${field}: ${rule}`);
  const element = ELEMENT_OF[oid];
  if (element !== undefined) return decodeArray(raw, element, binary, index, bad);
  if (!binary) {
    const s = raw.toString('utf8');
    switch (oid) {
      case Oid.bool:
        if (!/^(t|true|f|false|1|0|y|yes|n|no|on|off)$/i.test(s.trim())) throw bad(`"${s}" is not a boolean`);
        return { value: /^(t|true|1|y|yes|on)$/i.test(s.trim()), type: BOOLEAN };
      case Oid.int2:
      case Oid.int4:
      case Oid.int8:
        if (!/^\s*[-+]?\d+\s*$/.test(s)) throw bad(`"${s}" is not an integer`);
        return { value: BigInt(s.trim()), type: BIGINT };
      case Oid.float4:
      case Oid.float8: {
        const n = Number(s);
        if (Number.isNaN(n) && s.trim() !== 'NaN') throw bad(`"${s}" is not a number`);
        return { value: n, type: DOUBLE };
      }
      case Oid.bytea:
        return { value: new DuckDBBlobValue(s.startsWith('\\x') ? Buffer.from(s.slice(2), 'hex') : Buffer.from(s, 'latin1')), type: BLOB };
      default:
        return { value: s, type: VARCHAR };
    }
  }
  const need = (n: number) => {
    if (raw.length !== n) throw bad(`binary value must be ${n} bytes, got ${raw.length}`);
  };
  switch (oid) {
    case Oid.bool:
      need(1);
      return { value: raw[0] !== 0, type: BOOLEAN };
    case Oid.int2:
      need(2);
      return { value: raw.readInt16BE(0), type: SMALLINT };
    case Oid.int4:
      need(4);
      return { value: raw.readInt32BE(0), type: INTEGER };
    case Oid.int8:
      need(8);
      return { value: raw.readBigInt64BE(0), type: BIGINT };
    case Oid.float4:
      need(4);
      return { value: raw.readFloatBE(0), type: FLOAT };
    case Oid.float8:
      need(8);
      return { value: raw.readDoubleBE(0), type: DOUBLE };
    case Oid.bytea:
      return { value: new DuckDBBlobValue(Uint8Array.from(raw)), type: BLOB };
    case Oid.date:
      need(4);
      return { value: new DuckDBDateValue(raw.readInt32BE(0) + PG_EPOCH_DAYS), type: DATE };
    case Oid.timestamp:
      need(8);
      return { value: new DuckDBTimestampValue(raw.readBigInt64BE(0) + PG_EPOCH_MICROS), type: TIMESTAMP };
    case Oid.timestamptz:
      need(8);
      return { value: new DuckDBTimestampTZValue(raw.readBigInt64BE(0) + PG_EPOCH_MICROS), type: TIMESTAMPTZ };
    case Oid.interval:
      need(16);
      return { value: new DuckDBIntervalValue(raw.readInt32BE(12), raw.readInt32BE(8), raw.readBigInt64BE(0)), type: INTERVAL };
    case Oid.uuid: {
      need(16);
      return { value: DuckDBUUIDValue.fromUint128(BigInt(`0x${raw.toString('hex')}`)), type: UUID };
    }
    case Oid.jsonb:
      return { value: raw.subarray(1).toString('utf8'), type: VARCHAR };
    case Oid.text:
    case Oid.varchar:
    case Oid.json:
    case Oid.unknown:
    case Oid.bpchar:
    case Oid.name:
    case 0:
      return { value: raw.toString('utf8'), type: VARCHAR };
    default:
      throw bad(`binary format for type OID ${oid} is not supported; send it as text`);
  }
}

/** The element type of each array type the endpoint knows (the inverse of ARRAY_OF). */
const ELEMENT_OF: Record<number, number> = Object.fromEntries(Object.entries(ARRAY_OF).map(([e, a]) => [a, Number(e)]));

/**
 * A one-dimensional array parameter (text `{a,"b c",NULL}` or array_send's binary form) as a DuckDB list of
 * the element type, each element decoded as a parameter of that type would be.
 */
function decodeArray(raw: Buffer, element: number, binary: boolean, index: number, bad: (rule: string) => Error): BoundParameter {
  const items: (Buffer | null)[] = [];
  if (binary) {
    if (raw.length < 12) throw bad('binary array must have at least a 12-byte header');
    const ndim = raw.readInt32BE(0);
    if (ndim > 1) throw bad(`only one-dimensional arrays are supported, got ${ndim} dimensions`);
    if (ndim === 1) {
      if (raw.length < 20) throw bad('binary array header is cut short');
      const count = raw.readInt32BE(12);
      let at = 20;
      for (let i = 0; i < count; i++) {
        if (at + 4 > raw.length) throw bad(`binary array ends before element ${i + 1} of ${count}`);
        const len = raw.readInt32BE(at);
        at += 4;
        if (len < 0) items.push(null);
        else {
          if (at + len > raw.length) throw bad(`binary array ends inside element ${i + 1}`);
          items.push(raw.subarray(at, at + len));
          at += len;
        }
      }
    }
  } else {
    for (const item of parseArrayText(raw.toString('utf8'), bad)) items.push(item === null ? null : Buffer.from(item, 'utf8'));
  }
  const decoded = items.map((item) => decodeParameter(item, element, binary, index));
  // Elements bind as their decoding typed them (binary int4 as INTEGER, text as BIGINT); an all-NULL array by the element type.
  const typed = decoded.find((d) => d.type !== undefined)?.type;
  return { value: listValue(decoded.map((d) => d.value)), type: LIST(typed ?? elementType(element)) };
}

/** The DuckDB type an element of `oid` binds as (what decodeParameter gives a value of that type). */
function elementType(oid: number): DuckDBType {
  switch (oid) {
    case Oid.bool:
      return BOOLEAN;
    case Oid.int2:
    case Oid.int4:
    case Oid.int8:
      return BIGINT;
    case Oid.float4:
    case Oid.float8:
      return DOUBLE;
    case Oid.bytea:
      return BLOB;
    case Oid.date:
      return DATE;
    case Oid.timestamp:
      return TIMESTAMP;
    case Oid.timestamptz:
      return TIMESTAMPTZ;
    default:
      return VARCHAR;
  }
}

/** array_in for one dimension: `{a,"b \"c\"",NULL}`; elements stay text for their own type's decoding. */
function parseArrayText(s: string, bad: (rule: string) => Error): (string | null)[] {
  const text = s.trim();
  if (!text.startsWith('{') || !text.endsWith('}')) throw bad(`"${s}" is not an array (write it as {a,b,c})`);
  const body = text.slice(1, -1);
  const out: (string | null)[] = [];
  if (body.trim() === '') return out;
  let i = 0;
  while (i <= body.length) {
    while (body[i] === ' ') i++;
    if (body[i] === '{') throw bad('only one-dimensional arrays are supported');
    if (body[i] === '"') {
      let v = '';
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        v += body[i++] ?? '';
      }
      if (body[i] !== '"') throw bad(`"${s}" has an unterminated quoted element`);
      i++;
      out.push(v);
    } else {
      let v = '';
      while (i < body.length && body[i] !== ',') {
        if (body[i] === '\\') i++;
        v += body[i++] ?? '';
      }
      v = v.trim();
      out.push(/^null$/i.test(v) ? null : v);
    }
    while (body[i] === ' ') i++;
    if (i >= body.length) break;
    if (body[i] !== ',') throw bad(`"${s}" is not an array: expected a comma at position ${i + 2}`);
    i++;
  }
  return out;
}
