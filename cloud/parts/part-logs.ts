// The log entries that machines upload, per part. Entries are kept 30 days (SPEC.md "Limits"): older
// ones are never returned, are refused at upload, and are deleted by a sweep (at start and hourly).
// There is no other way to delete logs. The clock is injected so that retention can be tested.
//
// Both TabularStore backends hold the entries in a table named logs.part_logs: on DuckDB in a database
// file of its own, written on a connection of its own through a staging table (log-database.ts,
// log-staging.ts); on PostgreSQL in the schema `logs`, one INSERT per batch (pg-part-logs.ts). Reads
// are the same statement on both. Tails (follow) hear this process's appends on DuckDB, the only
// process there is; on PostgreSQL they read the table when any process's append notifies them (and
// on a slow poll), so they see every process's appends.
import type { DuckDBConnection } from '@duckdb/node-api';
import { invalidArgument } from '../../core/serving/status-error.js';
import { LEVEL_NAMES } from '../../core/config/log-levels.js';
import { FairTurns } from '../kit/fair-turns.js';
import type { Store } from '../store/store.js';
import type { SqlValue, TabularStore } from '../store/tabular.js';
import { timestampValue } from '../store/timestamp.js';
import { epochMicrosSql, timestampText } from '../store/time-sql.js';
import { LOG_WRITER, openLogDatabase, PART_LOGS } from './log-database.js';
import type { StoredLogEntry } from './log-entry.js';
import { insertLogEntries } from './log-staging.js';
import { partEvents } from './part-events.js';
import { followPartLogsPg, insertLogBatchPg } from './pg-part-logs.js';

export type { StoredLogEntry } from './log-entry.js';

export const LOG_RETENTION_MS = 30 * 24 * 3600 * 1000;
export const DEFAULT_LOG_PAGE = 100;
export const MAX_LOG_PAGE = 10_000;

export interface LogQuery {
  levels?: string[];
  start?: Date;
  end?: Date;
  filter?: string;
  pageToken?: string;
  limit?: number;
}

export interface LogPage {
  logs: StoredLogEntry[];
  nextPageToken: string;
}

const LEVELS: readonly string[] = LEVEL_NAMES;

export function checkLevels(levels: readonly string[] | undefined, field = 'levels'): string[] {
  const out = (levels ?? []).map((l) => l.toLowerCase());
  out.forEach((l, i) => {
    if (!LEVELS.includes(l)) throw invalidArgument(`${field}[${i}] "${levels![i]}": must be one of ${LEVEL_NAMES.join(', ')}`);
  });
  // The set, not the list: a request repeating a level 100,000 times costs no more than one naming it once.
  return [...new Set(out)];
}

interface Cursor {
  t: number; // microseconds
  s: string; // seq
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

const INT64_MAX = 2n ** 63n - 1n;

/** The whole token is checked here, ranges too: a forged one is INVALID_ARGUMENT, never INTERNAL. */
function decodeCursor(token: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Cursor> | null;
    if (c !== null && typeof c === 'object' && Number.isSafeInteger(c.t) && typeof c.s === 'string' && /^\d{1,19}$/.test(c.s) && BigInt(c.s) <= INT64_MAX)
      return c as Cursor;
  } catch {
    // reported below
  }
  throw invalidArgument('page_token: must be the next_page_token of a previous page');
}

/** The writes of all PartLogs of one store, taken in turn between organizations (one batch at a time). */
const writeTurns = new WeakMap<TabularStore, FairTurns>();

/** The DuckDB Store behind a TabularStore whose dialect is duckdb (the logs' own file and writer). */
const duckStore = (store: TabularStore): Store => store as Store;

export class PartLogs {
  private seq?: bigint;
  private sweeper?: NodeJS.Timeout;
  private readonly turns: FairTurns;

  constructor(
    private readonly store: TabularStore,
    /** Milliseconds since the epoch; tests move it forward. */
    private readonly now: () => number = Date.now,
  ) {
    let turns = writeTurns.get(store);
    if (!turns) writeTurns.set(store, (turns = new FairTurns()));
    this.turns = turns;
  }

  /**
   * On DuckDB, opens the logs' own database file (log-database.ts) on the store's instance; on
   * PostgreSQL the table comes from the schema's migrations.
   */
  static async open(store: TabularStore, now?: () => number): Promise<PartLogs> {
    if (store.dialect === 'duckdb') await openLogDatabase(duckStore(store));
    return new PartLogs(store, now);
  }

  /** Deletes expired entries now and then every hour. */
  startSweeping(intervalMs = 3600_000): void {
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), intervalMs);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private cutoff(): Date {
    return new Date(this.now() - LOG_RETENTION_MS);
  }

  /** Deletes the entries older than 30 days; returns how many. */
  sweep(): Promise<number> {
    const sql = `DELETE FROM ${PART_LOGS} WHERE time < ?`;
    if (this.store.dialect !== 'duckdb') return this.store.execute(sql, [this.cutoff()]);
    return duckStore(this.store).dedicatedWrite(LOG_WRITER, async (conn) => Number((await conn.run(sql, [timestampValue(this.cutoff())])).rowsChanged));
  }

  /**
   * Stores a batch durably and returns how many entries were stored; entries already past retention are
   * dropped. On DuckDB a batch is staged, then moved by one INSERT committed off the main thread
   * (log-staging.ts), on the logs' own connection; on PostgreSQL it is one INSERT (pg-part-logs.ts).
   * Batches are written one at a time per process, in turn between organizations (`org`; FairTurns):
   * one organization's flood of batches waits behind itself, not in front of another organization's.
   */
  async append(partId: string, entries: readonly StoredLogEntry[], org = ''): Promise<number> {
    const cutoff = this.cutoff().getTime();
    const kept = entries.filter((e) => e.time.getTime() >= cutoff);
    if (kept.length === 0) return 0;
    if (this.store.dialect !== 'duckdb') {
      await this.turns.run(org, () => insertLogBatchPg(this.store, partId, kept));
      return kept.length;
    }
    await this.turns.run(org, () => duckStore(this.store).dedicatedWrite(LOG_WRITER, (conn) => this.insert(conn, partId, kept)));
    partEvents(this.store).emit('logs', partId, kept);
    return kept.length;
  }

  /**
   * Calls fn with each batch of partId's entries stored from now on, in the order stored, until the
   * returned function is called. Resolves once following has begun (on PostgreSQL its start is read).
   */
  async follow(partId: string, fn: (entries: StoredLogEntry[]) => void): Promise<() => void> {
    if (this.store.dialect !== 'duckdb') return followPartLogsPg(this.store, partId, fn);
    const events = partEvents(this.store);
    const onLogs = (id: string, entries: StoredLogEntry[]) => {
      if (id === partId) fn(entries);
    };
    events.on('logs', onLogs);
    return () => void events.off('logs', onLogs);
  }

  private async insert(conn: DuckDBConnection, partId: string, kept: readonly StoredLogEntry[]): Promise<void> {
    if (this.seq === undefined) {
      const reader = await conn.runAndReadAll(`SELECT coalesce(max(seq), 0) AS m FROM ${PART_LOGS}`);
      this.seq ??= BigInt(reader.getRowObjects()[0].m as bigint);
    }
    // Reserved before any await, so that two writers never take the same seqs.
    const first = this.seq + 1n;
    this.seq += BigInt(kept.length);
    await insertLogEntries(conn, partId, kept, first);
  }

  /** A page of entries, newest first, by level, time window and text. */
  async query(partId: string, q: LogQuery): Promise<LogPage> {
    const levels = checkLevels(q.levels);
    const limit = q.limit && q.limit > 0 ? q.limit : DEFAULT_LOG_PAGE;
    if (limit > MAX_LOG_PAGE) throw invalidArgument(`limit ${limit}: must be at most ${MAX_LOG_PAGE}`);
    const where = ['part_id = ?', 'time >= ?'];
    const params: SqlValue[] = [partId, this.cutoff()];
    if (levels.length) {
      where.push(`level IN (${levels.map(() => '?').join(', ')})`);
      params.push(...levels);
    }
    if (q.start) {
      where.push('time >= ?');
      params.push(q.start);
    }
    if (q.end) {
      where.push('time < ?');
      params.push(q.end);
    }
    if (q.filter) {
      // strpos() is a plain substring test: no pattern characters to escape.
      where.push('(strpos(lower(message), ?) > 0 OR strpos(lower(logger_name), ?) > 0)');
      params.push(q.filter.toLowerCase(), q.filter.toLowerCase());
    }
    if (q.pageToken) {
      const c = decodeCursor(q.pageToken);
      // The time to the microsecond as text (time-sql.ts): the comparison narrows the index scan on PostgreSQL.
      const t = timestampText(BigInt(c.t));
      where.push('(time < CAST(? AS TIMESTAMPTZ) OR (time = CAST(? AS TIMESTAMPTZ) AND seq < ?))');
      params.push(t, t, BigInt(c.s));
    }
    const rows = await this.store.query(
      `SELECT ${epochMicrosSql(this.store.dialect, 'time')} AS us, seq, level, logger_name, message, fields FROM ${PART_LOGS}
       WHERE ${where.join(' AND ')} ORDER BY time DESC, seq DESC LIMIT ${limit + 1}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      logs: page.map((r) => ({
        time: new Date(Number(r.us as bigint) / 1000),
        level: String(r.level),
        loggerName: String(r.logger_name),
        message: String(r.message),
        fields: JSON.parse(String(r.fields)) as Record<string, unknown>,
      })),
      nextPageToken: rows.length > limit && last ? encodeCursor({ t: Number(last.us as bigint), s: String(last.seq) }) : '',
    };
  }
}
