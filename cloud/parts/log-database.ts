// Part logs live in a database file of their own, <data-dir>/logs.duckdb, attached to the store's DuckDB
// instance as `logs` and written on a connection of their own (issue 27, finding 7).
//
// Why: a DuckDB file has one write-ahead log and one checkpoint lock. A 10,000-entry log batch writes
// about 2.5 MB to the log when it commits, and every 16 MB DuckDB checkpoints the file, while each other
// commit into the same file waits. With part_logs in platform.duckdb, another organization's 10-point
// upload waited 430 to 520 ms behind one machine's log flood (bench:isolation, log-tails). Two files are
// two logs and two checkpoint locks: a small insert's commit beside a loop of 10,000-row inserts had a p99
// of 1.0 to 1.3 s into the same file and 48 to 104 ms into another file of the same instance (the same
// 2-core machine, loaded). Log writes also stay off the store's writer and insert lanes, which every
// organization's uploads share (Store.dedicatedWrite).
//
// Readers of the store see the attached file as `logs` (ATTACH belongs to the instance). The SQL
// sandbox refuses catalogue-qualified names, so user queries cannot reach it (cloud/query/sql/).
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from '../store/store.js';

export const LOGS_DATABASE = 'logs';
/** The table of log entries, qualified with its database. */
export const PART_LOGS = `${LOGS_DATABASE}.part_logs`;
/** The name of the store's writer connection for the logs (Store.dedicatedWrite). */
export const LOG_WRITER = 'logs';

export function logDatabasePath(dataDir: string): string {
  return join(dataDir, 'logs.duckdb');
}

// seq orders entries of the same time, so that pages never skip or repeat one.
const columns = `part_id VARCHAR NOT NULL, time TIMESTAMPTZ NOT NULL, seq BIGINT NOT NULL, level VARCHAR NOT NULL,
  logger_name VARCHAR NOT NULL, message VARCHAR NOT NULL, fields VARCHAR NOT NULL`;
const names = 'part_id, time, seq, level, logger_name, message, fields';

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const sqlName = (s: string) => `"${s.replaceAll('"', '""')}"`;

/**
 * Attaches the logs' file (once per instance), creates part_logs in it, and moves the entries of a
 * part_logs table that earlier versions kept in the main file. The move is safe to repeat after a crash:
 * the copy is one transaction and takes only seqs above those already copied, then the old table is
 * dropped.
 */
export async function openLogDatabase(store: Store): Promise<void> {
  const path = logDatabasePath(store.dataDir);
  // Files made before the cloud kept its files private get their modes tightened, as the store does.
  for (const file of [path, `${path}.wal`]) if (existsSync(file)) chmodSync(file, 0o600);
  await store.dedicatedWrite(LOG_WRITER, async (conn) => {
    await conn.run(`ATTACH IF NOT EXISTS ${sqlString(path)} AS ${LOGS_DATABASE}`);
    await conn.run(`CREATE TABLE IF NOT EXISTS ${PART_LOGS} (${columns})`);
    await moveOldEntries(conn);
  });
}

async function moveOldEntries(conn: DuckDBConnection): Promise<void> {
  const main = String((await conn.runAndReadAll('SELECT current_database() AS d')).getRowObjects()[0].d);
  const old = await conn.runAndReadAll(
    `SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = $db AND schema_name = 'main' AND table_name = 'part_logs'`,
    {
      db: main,
    },
  );
  if (Number(old.getRowObjects()[0].n) === 0) return;
  const from = `${sqlName(main)}.main.part_logs`;
  await conn.run(`INSERT INTO ${PART_LOGS} (${names}) SELECT ${names} FROM ${from} WHERE seq > (SELECT coalesce(max(seq), 0) FROM ${PART_LOGS})`);
  await conn.run(`DROP TABLE ${from}`);
}
