// Runs one statement on a dedicated connection under a statement timeout and result row/byte limits.
// The timeout interrupts DuckDB itself (not just the wait), so a runaway query stops using the CPU.
import type { DuckDBConnection } from '@duckdb/node-api';
import { calculateObjectSize } from 'bson';
import { invalidArgument, permissionDenied, StatusError } from '../../../core/grpc/status-error.js';
import { chunkToDocuments, resultColumns } from './document-values.js';
import type { QueryLimits } from './limits.js';

export async function runLimited(conn: DuckDBConnection, sql: string, limits: QueryLimits): Promise<Record<string, unknown>[]> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.interrupt();
  }, limits.timeoutMs);
  try {
    const result = await conn.stream(sql);
    const layout = resultColumns(result);
    const docs: Record<string, unknown>[] = [];
    let bytes = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      if (docs.length + chunk.rowCount > limits.maxRows) {
        throw invalidArgument(`sql_query: the result has more than the ${limits.maxRows}-row limit; add a LIMIT or aggregate`);
      }
      for (const doc of chunkToDocuments(chunk, layout)) {
        bytes += calculateObjectSize(doc);
        if (bytes > limits.maxBytes) {
          throw invalidArgument(`sql_query: the result is larger than the ${limits.maxBytes}-byte limit; select fewer columns or rows`);
        }
        docs.push(doc);
      }
    }
    // An interrupted streaming result can end quietly instead of failing: never return it as complete.
    if (timedOut) throw timeoutError(limits);
    return docs;
  } catch (err) {
    if (timedOut) throw timeoutError(limits);
    throw toStatusError(err);
  } finally {
    clearTimeout(timer);
  }
}

const timeoutError = (limits: QueryLimits) =>
  invalidArgument(`sql_query: the statement ran longer than the ${limits.timeoutMs} ms timeout and was interrupted`);

/** DuckDB errors become client errors that keep DuckDB's explanation; engine permission errors stay denials. */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/^Permission Error|disabled by configuration|external access/i.test(message)) return permissionDenied(`sql_query: ${message}`);
  if (/^INTERRUPT|Interrupted/i.test(message)) return invalidArgument('sql_query: the statement was interrupted');
  return invalidArgument(`sql_query: ${message}`);
}
