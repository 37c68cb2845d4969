// Reads reading documents from DuckDB for MQL. DuckDB renders each row as one JSON text and V8 parses it:
// one value crosses from DuckDB per row instead of one per column, several times faster than converting
// every column value, which matters when a pipeline scans a million readings.
import type { DuckDBConnection } from '@duckdb/node-api';
import { invalidArgument } from '../../../core/serving/status-error.js';
import type { MemoryGuard } from '../memory-guard.js';
import { interruptible } from '../sql/limited-run.js';
import { READING_FIELDS } from './reading-fields.js';
import { sqlString } from './sql-literals.js';

/** The SELECT list: one JSON object per row; times as epoch milliseconds (documents carry ms Dates). */
export function documentSelect(fields: readonly string[]): string {
  const pairs = fields.map((f) => {
    const { column, kind } = READING_FIELDS[f];
    return `${sqlString(f)}, ${kind === 'date' ? `epoch_ms(${column})` : column}`;
  });
  return `json_object(${pairs.join(', ')})::VARCHAR AS doc`;
}

/** The reading fields that documentSelect renders as epoch milliseconds. */
export const dateFieldsOf = (fields: readonly string[]) => fields.filter((f) => READING_FIELDS[f].kind === 'date');

/**
 * Rows as JSON texts, one JSON array per DuckDB chunk. Parsing is left to whoever uses the documents
 * (the mingo worker, usually), and a few large strings cross to a worker far faster than objects.
 */
export interface DocumentBatches {
  batches: string[];
  count: number;
}

/** Parses batches into documents, turning the epoch-millisecond date fields into Dates. */
export function parseBatches(batches: readonly string[], dateFields: readonly string[]): Record<string, unknown>[] {
  const docs: Record<string, unknown>[] = [];
  for (const batch of batches) {
    for (const doc of JSON.parse(batch) as Record<string, unknown>[]) {
      for (const f of dateFields) if (doc[f] !== null) doc[f] = new Date(doc[f] as number);
      docs.push(doc);
    }
  }
  return docs;
}

export async function scanBatches(
  conn: DuckDBConnection,
  sql: string,
  limits: { timeoutMs: number; maxRows: number; memory?: MemoryGuard },
): Promise<DocumentBatches> {
  // The JSON text held so far, counted for the memory guard (2 bytes a character in V8 at worst).
  let held = 0;
  return interruptible(
    conn,
    limits,
    'query',
    async () => {
      const result = await conn.stream(sql);
      const batches: string[] = [];
      let count = 0;
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        count += chunk.rowCount;
        if (count > limits.maxRows) {
          throw invalidArgument(`query: the pipeline would read more than ${limits.maxRows} documents; add a selective $match first`);
        }
        const batch = `[${(chunk.getColumnValues(0) as string[]).join(',')}]`;
        held += 2 * batch.length;
        batches.push(batch);
      }
      return { batches, count };
    },
    () => held,
  );
}

export async function scanDocuments(
  conn: DuckDBConnection,
  sql: string,
  dateFields: readonly string[],
  limits: { timeoutMs: number; maxRows: number; memory?: MemoryGuard },
): Promise<Record<string, unknown>[]> {
  return parseBatches((await scanBatches(conn, sql, limits)).batches, dateFields);
}
