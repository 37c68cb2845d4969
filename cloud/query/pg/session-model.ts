// What a PostgreSQL session works with: its options, its prepared statements and portals, the error type
// that carries a SQLSTATE, and the small helpers around them that the session's modules share
// (pg-session.ts the protocol, statement-runner.ts the DuckDB work, session-commands.ts SET/SHOW/cursors).
import type { DuckDBConnection, DuckDBDataChunk, DuckDBPreparedStatement, DuckDBResult, DuckDBType } from '@duckdb/node-api';
import { DuckDBMaterializedResult } from '@duckdb/node-api';
import { status } from '@grpc/grpc-js';
import { StatusError } from '../../../core/serving/status-error.js';
import type { Tree } from '../sql/statement-inspector.js';
import { queryStatusError } from '../sql/limited-run.js';
import type { SqlSandbox } from '../sql/sql-sandbox.js';
import type { BoundParameter } from './parameter-decoding.js';
import type { SessionStatement } from './session-statements.js';
import type { ColumnWriter } from './column-writers.js';
import { errorResponse, ProtocolViolation } from './wire-messages.js';
import { PgError } from '../../errors/catalogue.js';
export { PgError };

/** A pipeline's sink, shown as a relation named after the pipeline. */
export interface SinkRelation {
  name: string;
  pipelineId: string;
}

export interface SessionOptions {
  organizationId: string;
  /** The organisation's pipeline sinks, read once when the session first needs its connection. */
  sinks?: () => Promise<readonly SinkRelation[]>;
  username: string;
  database: string;
  sandbox: SqlSandbox;
  timeoutMs: number;
  backendPid: number;
  startupParams: Record<string, string>;
}

export interface Statement {
  kind: 'empty' | 'session' | 'data' | 'catalog';
  session?: SessionStatement;
  prepared?: DuckDBPreparedStatement;
  conn?: DuckDBConnection;
  paramOids: number[];
  names: string[];
  node?: Tree;
  /** The SQL that `prepared` was prepared from (dialect-normalized). */
  sql?: string;
  /** How many rows the statement's last complete result had: a small one makes its next run materialized. */
  lastRows?: number;
  /** DuckDB's column names of the statement's last streamed result (a wrapped run's are the wrapper's). */
  resultNames?: string[];
  /**
   * The statement wrapped in `LIMIT SMALL_RESULT_ROWS + 1`, prepared at its first materialized run; null
   * when it cannot be wrapped (it then always streams).
   */
  bounded?: DuckDBPreparedStatement | null;
}

export interface Portal {
  statement: Statement;
  params: BoundParameter[];
  formats: number[];
  result?: DuckDBResult;
  /** For a materialized result, the index of the next chunk to read (chunks are read without a hop). */
  nextChunk?: number;
  columns?: { names: string[]; types: DuckDBType[]; oids: number[] };
  chunk?: DuckDBDataChunk;
  writers?: ColumnWriter[];
  rowInChunk: number;
  chunkRows: number;
  done: boolean;
  sent: number;
  invalidated?: boolean;
}

export const BATCH_BYTES = 256 * 1024;
/** A result of at most this many rows (one DuckDB vector) is small: the statement's next run is materialized. */
export const SMALL_RESULT_ROWS = 2048;
/** Held-back replies are written once they reach this size, so a large result streams. */
export const OUTPUT_BYTES = 64 * 1024;

/** The ErrorResponse of any error a statement ends with: a PgError's own SQLSTATE, or one derived from the gRPC error. */
export function errorOf(err: unknown): Buffer {
  const { code, message } = errorParts(err);
  return errorResponse(code, message);
}

/** The SQLSTATE and message an error is answered with. */
export function errorParts(err: unknown): { code: string; message: string } {
  if (err instanceof PgError) return { code: err.code, message: err.message };
  if (err instanceof ProtocolViolation) return { code: '08P01', message: `invalid message: ${err.message}` };
  const e = err instanceof StatusError ? err : queryStatusError(err);
  return { code: sqlState(e), message: e.message.replace(/^sql_query: /, '') };
}

export function sqlState(err: StatusError): string {
  const m = err.message;
  if (err.code === status.PERMISSION_DENIED) return '42501';
  if (err.code === status.NOT_FOUND) return '42704';
  if (err.code === status.RESOURCE_EXHAUSTED) return '53000';
  if (err.code === status.DEADLINE_EXCEEDED || /timeout/.test(m)) return '57014';
  if (/syntax error|Parser Error/i.test(m)) return '42601';
  if (/Referenced column|column .* not found|Binder Error.*column/i.test(m)) return '42703';
  if (/Table with name|does not exist/i.test(m)) return '42P01';
  if (/Conversion Error|Could not convert|is not (a|an) /i.test(m)) return '22P02';
  if (/limit/.test(m)) return '54000';
  return '42000';
}

export function formatOf(formats: number[], i: number): number {
  if (formats.length === 0) return 0;
  return formats.length === 1 ? formats[0] : (formats[i] ?? 0);
}

/** The next chunk of a portal's materialized result, or null after the last. */
export function materializedChunk(portal: Portal): DuckDBDataChunk | null {
  const result = portal.result as DuckDBMaterializedResult;
  return portal.nextChunk! < result.chunkCount ? result.getChunk(portal.nextChunk!++) : null;
}

export function bindParameters(prepared: DuckDBPreparedStatement, params: readonly BoundParameter[]): void {
  prepared.clearBindings();
  params.forEach((p, i) => (p.value === null ? prepared.bindNull(i + 1) : prepared.bindValue(i + 1, p.value, p.type)));
}

export function destroyStatement(statement: Statement | undefined): void {
  statement?.prepared?.destroySync();
  statement?.bounded?.destroySync();
}
