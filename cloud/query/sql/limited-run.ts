// Runs one statement on a dedicated connection under a statement timeout and result row/byte limits.
// The timeout interrupts DuckDB itself (not just the wait), so a runaway query stops using the CPU.
import type { DuckDBConnection } from '@duckdb/node-api';
import { deadlineExceeded, invalidArgument, permissionDenied, resourceExhausted, StatusError } from '../../../core/serving/status-error.js';
import { documentSize, resultTooLarge } from '../result-size.js';
import { chunkToDocuments, resultColumns } from './document-values.js';
import type { QueryLimits } from './limits.js';
import { interruptOn, overMemoryMessage, type StopReason } from '../interrupt.js';

export interface LimitedResult {
  columns: readonly string[];
  docs: Record<string, unknown>[];
}

export async function runLimited(conn: DuckDBConnection, sql: string, limits: QueryLimits, field = 'sql_query'): Promise<Record<string, unknown>[]> {
  return (await runLimitedTable(conn, sql, limits, field)).docs;
}

/** Like runLimited, and also names the result columns (an empty result still has them). */
export async function runLimitedTable(conn: DuckDBConnection, sql: string, limits: QueryLimits, field = 'sql_query'): Promise<LimitedResult> {
  const usage = { bytes: 0 };
  return interruptible(
    conn,
    limits,
    field,
    () => readLimited(conn, sql, limits, field, usage),
    () => usage.bytes,
  );
}

/**
 * Streams `sql`'s result into documents under the row and byte limits; the caller bounds the time.
 * `usage.bytes` follows the BSON size of the documents built so far, for the memory guard's accounting.
 */
export async function readLimited(
  conn: DuckDBConnection,
  sql: string,
  limits: QueryLimits,
  field = 'sql_query',
  usage: { bytes: number } = { bytes: 0 },
): Promise<LimitedResult> {
  const result = await conn.stream(sql);
  const layout = resultColumns(result);
  const docs: Record<string, unknown>[] = [];
  let bytes = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    if (docs.length + chunk.rowCount > limits.maxRows) {
      throw resourceExhausted(`${field}: the result has more than the ${limits.maxRows}-row limit (PLATFORM_QUERY_MAX_ROWS); add a LIMIT or aggregate`);
    }
    const chunkDocs = chunkToDocuments(chunk, layout);
    if (!Number.isFinite(limits.maxBytes)) {
      for (const doc of chunkDocs) docs.push(doc);
      continue;
    }
    for (const doc of chunkDocs) {
      // Also refuses a document over BSON's 16 MiB limit, which the encoder would truncate (../result-size.ts).
      bytes += documentSize(doc, field, docs.length);
      usage.bytes = bytes;
      if (bytes > limits.maxBytes) throw resultTooLarge(field, limits.maxBytes);
      docs.push(doc);
    }
  }
  return { columns: layout.names, docs };
}

/**
 * Runs `body` against `conn`, interrupting DuckDB when it outlives `timeoutMs` (or `deadline`, when the
 * query's time began before the connection was had). A run that was
 * interrupted is a timeout error even when DuckDB ended its stream quietly instead of failing, so a
 * cut-short result is never returned as complete; other errors become status errors naming `field`.
 * `held` tells the memory guard what the run holds outside DuckDB, so that it stops the largest query.
 */
export async function interruptible<T>(
  conn: DuckDBConnection,
  limits: Pick<QueryLimits, 'timeoutMs' | 'memory'> & { deadline?: number },
  field: string,
  body: () => Promise<T>,
  held?: () => number,
): Promise<T> {
  const stopped = (reason: StopReason) =>
    reason === 'memory' ? resourceExhausted(`${field}: ${overMemoryMessage(limits.memory!, 'query')}`) : timeoutError(limits, field);
  try {
    const deadline = limits.deadline ?? Date.now() + limits.timeoutMs;
    return await interruptOn(conn, { deadline, memory: limits.memory, held }, body, stopped);
  } catch (err) {
    throw queryStatusError(err, field);
  }
}

export const timeoutError = (limits: Pick<QueryLimits, 'timeoutMs'>, field: string) =>
  deadlineExceeded(`${field}: the query ran longer than the ${limits.timeoutMs} ms time limit (PLATFORM_QUERY_TIMEOUT_MS) and was interrupted`);

/** DuckDB errors become client errors that keep DuckDB's explanation; engine permission errors stay denials. */
export function queryStatusError(err: unknown, field = 'sql_query'): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/^Permission Error|disabled by configuration|external access/i.test(message)) return permissionDenied(`${field}: ${message}`);
  if (/^INTERRUPT|Interrupted/i.test(message)) return invalidArgument(`${field}: the statement was interrupted`);
  // DuckDB refused memory beyond its memory_limit (or its temp directory is full): a limit, not a bad query.
  if (/^Out of Memory Error|could not allocate|failed to allocate|max_temp_directory_size/i.test(message)) {
    return resourceExhausted(`${field}: the query needs more memory than its limit (PLATFORM_DUCKDB_MEMORY_MB); ${message.split('\n')[0]}`);
  }
  return invalidArgument(`${field}: ${message}`);
}
