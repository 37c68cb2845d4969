// PostgreSQL's view of DuckDB types: the type OID each DuckDB type is shown as, its name and its typlen.
// The encodings of values are in value-formats.ts (results) and parameter-decoding.ts (Bind parameters).
import { DuckDBTypeId, type DuckDBType } from '@duckdb/node-api';

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

export const ARRAY_OF: Record<number, number> = {
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

export const PG_EPOCH_DAYS = 10957; // 2000-01-01 in days since 1970-01-01
export const PG_EPOCH_MICROS = BigInt(PG_EPOCH_DAYS) * 86_400_000_000n;
