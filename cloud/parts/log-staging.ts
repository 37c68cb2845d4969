// How a batch of log entries reaches part_logs without holding the main thread (issue 27, finding 7).
//
// An appender on part_logs itself commits in flushSync: the write-ahead log and, every 16 MB of it,
// DuckDB's automatic checkpoint, all on the JavaScript thread. A machine sending 10,000-entry batches in
// a loop blocked every other organization's calls for 650 ms at each checkpoint. Here the entries go as
// data chunks into a temporary staging table of the logs' connection (never logged: an in-memory
// copy), and one INSERT ... SELECT, which DuckDB runs on a worker thread, moves them into part_logs (in
// the logs' own database file, log-database.ts) and commits. The same pattern as tabular ingest (`cloud/datasync/tabular-ingest.ts`).
import {
  BIGINT,
  DuckDBDataChunk,
  TIMESTAMPTZ,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { timestampValue } from '../store/timestamp.js';
import { PART_LOGS } from './log-database.js';
import type { StoredLogEntry } from './log-entry.js';

const stagingTable = 'part_logs_staging';
const createStaging = `CREATE OR REPLACE TEMP TABLE ${stagingTable} (
  time TIMESTAMPTZ NOT NULL, seq BIGINT NOT NULL, level VARCHAR NOT NULL, logger_name VARCHAR NOT NULL, message VARCHAR NOT NULL, fields VARCHAR NOT NULL)`;
const stagingTypes: DuckDBType[] = [TIMESTAMPTZ, BIGINT, VARCHAR, VARCHAR, VARCHAR, VARCHAR];
const insertFromStaging = `INSERT INTO ${PART_LOGS} (part_id, time, seq, level, logger_name, message, fields)
  SELECT $part, time, seq, level, logger_name, message, fields FROM ${stagingTable} WHERE seq BETWEEN $first AND $last`;
/** Staged rows a connection keeps before it replaces its staging table (a few MB of entries). */
const stagingRowsKept = 50_000;
/** Rows per data chunk (at most 2048, DuckDB's vector size): 2048 log lines took 15 to 60 ms of the thread on a loaded machine. */
const chunkRows = 512;

interface LaneState {
  stagedRows: number;
  insert?: DuckDBPreparedStatement;
}

const lanes = new WeakMap<DuckDBConnection, LaneState>();

/**
 * The entries as data chunks of up to chunkRows rows, one chunk per turn of the event loop: a chunk takes
 * a few milliseconds of the JavaScript thread (each string crosses N-API on its own), and other callers'
 * requests are served between them rather than after a whole 10,000-entry batch.
 */
async function* chunksOf(entries: readonly StoredLogEntry[], firstSeq: bigint): AsyncGenerator<DuckDBDataChunk> {
  for (let start = 0; start < entries.length; start += chunkRows) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const n = Math.min(chunkRows, entries.length - start);
    const columns: DuckDBValue[][] = [new Array(n), new Array(n), new Array(n), new Array(n), new Array(n), new Array(n)];
    for (let i = 0; i < n; i++) {
      const e = entries[start + i];
      columns[0][i] = timestampValue(e.time);
      columns[1][i] = firstSeq + BigInt(start + i);
      columns[2][i] = e.level;
      columns[3][i] = e.loggerName;
      columns[4][i] = e.message;
      columns[5][i] = JSON.stringify(e.fields);
    }
    const chunk = DuckDBDataChunk.create(stagingTypes, n);
    chunk.setColumns(columns);
    yield chunk;
  }
}

/**
 * Writes entries of one part with seqs firstSeq, firstSeq + 1, ... on conn (an insert lane: the caller
 * holds it) and resolves once they are committed. A failure writes nothing and starts the connection's
 * staging table afresh, so staged rows of a failed attempt never meet a retry of the same seqs.
 */
export async function insertLogEntries(conn: DuckDBConnection, partId: string, entries: readonly StoredLogEntry[], firstSeq: bigint): Promise<void> {
  let lane = lanes.get(conn);
  if (!lane) lanes.set(conn, (lane = { stagedRows: stagingRowsKept }));
  try {
    if (lane.stagedRows >= stagingRowsKept) {
      await conn.run(createStaging);
      lane.insert?.destroySync(); // it was bound to the table just replaced
      lane.insert = undefined;
      lane.stagedRows = 0;
    }
    const insert = (lane.insert ??= await conn.prepare(insertFromStaging));
    const appender = await conn.createAppender(stagingTable, null, 'temp');
    try {
      for await (const chunk of chunksOf(entries, firstSeq)) {
        appender.appendDataChunk(chunk);
        // Chunk by chunk, so the copy is spread over the turns too. A temporary table: an in-memory copy,
        // no log, no checkpoint.
        appender.flushSync();
      }
    } finally {
      appender.closeSync();
    }
    lane.stagedRows += entries.length;
    insert.clearBindings();
    insert.bind({ part: partId, first: firstSeq, last: firstSeq + BigInt(entries.length) - 1n }, { part: VARCHAR, first: BIGINT, last: BIGINT });
    await insert.run();
  } catch (err) {
    lane.stagedRows = stagingRowsKept;
    throw err;
  }
}
