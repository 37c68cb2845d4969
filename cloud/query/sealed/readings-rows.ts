// Moving readings rows from PostgreSQL into a DuckDB table of the embedded schema (issue 33's scale-out
// mode): the sealer stages a closed day this way before writing it to Parquet, and a query node loads an
// organization's unsealed tail this way. The DuckDB table is made with the embedded mode's own
// CREATE TABLE (cloud/store/schema.ts), so its columns, order and types are exactly the embedded
// engine's, whatever PostgreSQL calls them.
//
// Rows come through a server-side cursor, a batch at a time, so a day of millions of rows never sits
// in this process whole. Times travel as epoch microseconds (PostgreSQL's own precision; a JS Date
// would drop the microseconds), JSON as its text, tags as a string list.
import {
  BIGINT,
  BOOLEAN,
  DuckDBDataChunk,
  INTEGER,
  LIST,
  TIMESTAMPTZ,
  VARCHAR,
  listValue,
  timestampTZValue,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { schemaStatements } from '../../store/schema.js';
import type { SqlSession, SqlValue, TabularRow } from '../../store/tabular.js';

/** tabular_data's columns in the embedded schema's order, with their DuckDB types. */
export const READINGS_TABLE_COLUMNS: readonly { name: string; type: DuckDBType; kind: 'bigint' | 'text' | 'json' | 'tags' | 'time' | 'bool' | 'int' }[] = [
  { name: 'seq', type: BIGINT, kind: 'bigint' },
  { name: 'upload_id', type: VARCHAR, kind: 'text' },
  { name: 'organization_id', type: VARCHAR, kind: 'text' },
  { name: 'location_id', type: VARCHAR, kind: 'text' },
  { name: 'robot_id', type: VARCHAR, kind: 'text' },
  { name: 'robot_name', type: VARCHAR, kind: 'text' },
  { name: 'part_id', type: VARCHAR, kind: 'text' },
  { name: 'part_name', type: VARCHAR, kind: 'text' },
  { name: 'component_type', type: VARCHAR, kind: 'text' },
  { name: 'component_name', type: VARCHAR, kind: 'text' },
  { name: 'method_name', type: VARCHAR, kind: 'text' },
  { name: 'method_parameters', type: VARCHAR, kind: 'json' },
  { name: 'tags', type: LIST(VARCHAR), kind: 'tags' },
  { name: 'time_requested', type: TIMESTAMPTZ, kind: 'time' },
  { name: 'time_received', type: TIMESTAMPTZ, kind: 'time' },
  { name: 'time_synced', type: TIMESTAMPTZ, kind: 'time' },
  { name: 'data', type: VARCHAR, kind: 'json' },
  { name: 'internal', type: BOOLEAN, kind: 'bool' },
  { name: 'size_bytes', type: INTEGER, kind: 'int' },
];

/** The embedded schema's CREATE TABLE of tabular_data, renamed to `table`. */
export function readingsTableDdl(table: string): string {
  const ddl = schemaStatements.find((s) => /^CREATE TABLE IF NOT EXISTS tabular_data \(/.test(s));
  if (!ddl) throw new Error('cloud/store/schema.ts has no CREATE TABLE of tabular_data');
  return ddl.replace('CREATE TABLE IF NOT EXISTS tabular_data (', `CREATE TABLE ${table} (`);
}

/** The PostgreSQL select list that reads tabular_data's columns in the form toDuckDB expects. */
export const PG_READINGS_SELECT = READINGS_TABLE_COLUMNS.map(({ name, kind }) => {
  if (kind === 'time') return `CAST(extract(epoch FROM ${name}) * 1000000 AS bigint) AS ${name}`;
  if (kind === 'json') return `CAST(${name} AS text) AS ${name}`;
  return name;
}).join(', ');

/** One PostgreSQL value as the DuckDB value of its column. */
function toDuckDB(kind: (typeof READINGS_TABLE_COLUMNS)[number]['kind'], value: unknown): DuckDBValue {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'bigint':
      return BigInt(value as bigint);
    case 'time':
      return timestampTZValue(BigInt(value as bigint));
    case 'tags':
      return listValue((value as string[]).map(String));
    case 'bool':
      return Boolean(value);
    case 'int':
      return Number(value);
    default:
      return String(value);
  }
}

/** Appends PostgreSQL rows (read with PG_READINGS_SELECT) to a DuckDB table of READINGS_TABLE_COLUMNS. */
export async function appendReadings(conn: DuckDBConnection, table: string, rows: readonly TabularRow[]): Promise<void> {
  if (rows.length === 0) return;
  const appender = await conn.createAppender(table);
  try {
    const types = READINGS_TABLE_COLUMNS.map((c) => c.type);
    // DuckDB's vectors hold 2048 rows: one chunk per 2048 rows.
    for (let start = 0; start < rows.length; start += 2048) {
      const part = rows.slice(start, start + 2048);
      const chunk = DuckDBDataChunk.create(types, part.length);
      READINGS_TABLE_COLUMNS.forEach(({ name, kind }, i) => {
        chunk.setColumnValues(
          i,
          part.map((r) => toDuckDB(kind, r[name])),
        );
      });
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/**
 * Reads `select` (a statement whose columns are PG_READINGS_SELECT) through a cursor inside the
 * transaction `tx`, appending each batch to the DuckDB table; returns the rows copied.
 */
export async function copyReadings(
  tx: SqlSession,
  select: string,
  params: readonly SqlValue[],
  conn: DuckDBConnection,
  table: string,
  batchRows = 20_000,
): Promise<number> {
  const cursor = `readings_${Math.random().toString(36).slice(2, 10)}`;
  await tx.execute(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${select}`, params);
  let copied = 0;
  for (;;) {
    const rows = await tx.query(`FETCH ${batchRows} FROM ${cursor}`);
    if (rows.length === 0) break;
    await appendReadings(conn, table, rows);
    copied += rows.length;
  }
  await tx.execute(`CLOSE ${cursor}`);
  return copied;
}

/** The PostgreSQL select list for copyReadingsAsJson: JSON columns as their text, the rest as row_to_json renders them. */
const PG_JSON_SELECT = READINGS_TABLE_COLUMNS.map(({ name, kind }) => (kind === 'json' ? `CAST(${name} AS text) AS ${name}` : name)).join(', ');

/** read_json's column types for copyReadingsAsJson's lines (times as their ISO text, with offset). */
const JSON_COLUMNS = `{${READINGS_TABLE_COLUMNS.map(({ name, kind }) => {
  const type = { bigint: 'BIGINT', text: 'VARCHAR', json: 'VARCHAR', tags: 'VARCHAR[]', time: 'VARCHAR', bool: 'BOOLEAN', int: 'INTEGER' }[kind];
  return `${name}: '${type}'`;
}).join(', ')}}`;

const JSON_INSERT_LIST = READINGS_TABLE_COLUMNS.map(({ name, kind }) =>
  kind === 'time' ? `CAST(${name} AS TIMESTAMPTZ) AS ${name}` : kind === 'json' ? `CAST(${name} AS JSON) AS ${name}` : name,
).join(', ');

/** A DuckDB SELECT of the readings in an NDJSON file written by exportReadingsAsJson, as the embedded table's columns and types. */
export const readingsFromJson = (file: string) =>
  `SELECT ${JSON_INSERT_LIST} FROM read_json('${file.replace(/'/g, "''")}', format = 'newline_delimited', columns = ${JSON_COLUMNS})`;

/**
 * Writes the rows of `from` (the FROM clause and the rest after the select list; it must order them by
 * organization_id) into one NDJSON file per organization in `workDir`, for the sealer's days:
 * PostgreSQL renders each row as one JSON text (row_to_json), so one value a row crosses into JavaScript
 * instead of nineteen, none converted there, and DuckDB's JSON reader loads them (readingsFromJson).
 * Several times faster than copyReadings for millions of rows.
 */
export async function exportReadingsAsJson(
  tx: SqlSession,
  from: string,
  params: readonly SqlValue[],
  workDir: string,
  batchRows = 50_000,
): Promise<{ organizationId: string | null; file: string; rows: number }[]> {
  const cursor = `readings_${Math.random().toString(36).slice(2, 10)}`;
  // The day is sorted by organization and seq: in memory rather than in many small runs on disk.
  await tx.execute("SET LOCAL work_mem = '256MB'");
  await tx.execute(
    `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT r.organization_id AS o, CAST(row_to_json(r) AS text) AS j FROM (SELECT ${PG_JSON_SELECT} ${from}) r`,
    params,
  );
  const files: { organizationId: string | null; file: string; rows: number }[] = [];
  let out: FileHandle | undefined;
  try {
    for (;;) {
      const rows = await tx.query(`FETCH ${batchRows} FROM ${cursor}`);
      if (rows.length === 0) break;
      let start = 0;
      while (start < rows.length) {
        const org = rows[start].o as string | null;
        let end = start;
        while (end < rows.length && rows[end].o === org) end++;
        let current = files[files.length - 1];
        if (!current || current.organizationId !== org) {
          await out?.close();
          current = { organizationId: org, file: join(workDir, `org-${files.length}.ndjson`), rows: 0 };
          files.push(current);
          out = await open(current.file, 'w');
        }
        const lines: string[] = [];
        for (let k = start; k < end; k++) lines.push(rows[k].j as string);
        await out!.write(lines.join('\n') + '\n');
        current.rows += end - start;
        start = end;
      }
    }
  } finally {
    await out?.close();
  }
  await tx.execute(`CLOSE ${cursor}`);
  return files;
}
