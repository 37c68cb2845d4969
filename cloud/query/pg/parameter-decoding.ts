// Bind parameters: each one decoded from its text or binary form (each type's typreceive) by its declared
// type into the DuckDB value and type it is bound as.
import {
  type DuckDBType,
  type DuckDBValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBIntervalValue,
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
import { invalidArgument } from '../../../core/serving/status-error.js';
import { Oid, ARRAY_OF, PG_EPOCH_DAYS, PG_EPOCH_MICROS } from './pg-types.js';

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
