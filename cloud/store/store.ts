// The cloud's storage: one DuckDB file per data dir (<data-dir>/platform.duckdb) plus a BlobStore for
// binary content (<data-dir>/blobs). DuckDB admits one writing process, and inside it we funnel every
// write through one connection in a queue, so that transactions never conflict; the `seq` counters
// handed out by reserveSeq() stay unique without an index. Tabular ingest, which only inserts, has two
// more writer connections (insert lanes) so that one upload's commit overlaps the next one's insert.
// Reads use a small pool of other connections and see committed data only. Each read is prepared
// afresh: re-executing a kept prepared statement on a reader crashed the process (SIGSEGV copying
// strings into the result, DuckDB 1.5.6) about once in six runs of the data pipelines test; fresh
// statements did not in 25 runs under gdb. Parsing and planning cost well under a millisecond.
import {
  DuckDBConnection,
  DuckDBInstance,
  LIST,
  listValue,
  VARCHAR,
  type DuckDBResultReader,
  type DuckDBType,
  type DuckDBValue,
  type JS,
} from '@duckdb/node-api';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileBlobStore, type BlobStore } from './blob-store.js';
import { duckdbConfig, duckdbResourceSettings, type DuckDBResourceSettings } from './duckdb-settings.js';
import { schemaStatements } from './schema.js';
import type { SqlSession, TabularStore } from './tabular.js';
import { timestampValue } from './timestamp.js';
import { StoreLockedError } from '../errors/catalogue.js';
export { StoreLockedError };

/** Statement parameters: DuckDB values, or the values TabularStore modules pass (tabular.ts: a Date, a string[]). */
export type Params = readonly (DuckDBValue | Date | readonly string[])[] | Record<string, DuckDBValue>;
const VARCHAR_LIST = LIST(VARCHAR);
export type ParamTypes = DuckDBType[] | Record<string, DuckDBType | undefined>;
export type Row = Record<string, JS>;

export interface StoreOptions {
  /** Replaces the file BlobStore (e.g. with an S3-compatible one). */
  blobs?: BlobStore;
  /** How long to wait for another process (e.g. an admin command) to release the file. Default 10 s. */
  lockWaitMs?: number;
  readers?: number;
  /** Writer connections for insert-only transactions (see insertWrite). Default 2. */
  insertLanes?: number;
  /** Memory, threads and spill space of the DuckDB instance. Default: from the environment (duckdb-settings.ts). */
  resources?: DuckDBResourceSettings;
}

/** A writer connection of its own with a queue, for insert-only transactions. */
interface InsertLane {
  conn: DuckDBConnection;
  chain: Promise<unknown>;
  queued: number;
}

/**
 * The rows of a result as objects of JS values, the same as reader.getRowObjectsJS(). That one converts
 * value by value through a callback per row; converting whole columns first and then dealing them out
 * into rows is two to three times faster on a page of 50 rows, and a quarter faster on 10 000.
 */
export function rowObjectsOf(reader: DuckDBResultReader): Row[] {
  const names = reader.deduplicatedColumnNames();
  const columns = reader.getColumnsJS();
  const count = reader.currentRowCount;
  const rows: Row[] = new Array<Row>(count);
  for (let i = 0; i < count; i++) {
    const row: Row = {};
    for (let c = 0; c < names.length; c++) row[names[c]] = columns[c][i];
    rows[i] = row;
  }
  return rows;
}

/**
 * The parameters and their types as DuckDB takes them: each Date as a TIMESTAMPTZ value, each string
 * array as a VARCHAR[] list (typed, so that an empty one binds too). No copy when there is neither.
 */
function duckArgs(params: Params | undefined, types?: ParamTypes): [DuckDBValue[] | Record<string, DuckDBValue> | undefined, ParamTypes | undefined] {
  if (params === undefined || !Array.isArray(params)) return [params as Record<string, DuckDBValue> | undefined, types];
  const list = params as readonly (DuckDBValue | Date | readonly string[])[];
  let out: DuckDBValue[] | undefined;
  let outTypes = types;
  for (let i = 0; i < list.length; i++) {
    const value = list[i];
    if (value instanceof Date) (out ??= list.slice() as DuckDBValue[])[i] = timestampValue(value);
    else if (Array.isArray(value)) {
      (out ??= list.slice() as DuckDBValue[])[i] = listValue(value as string[]);
      if (outTypes === types) outTypes = Array.isArray(types) ? [...types] : [];
      (outTypes as DuckDBType[])[i] = VARCHAR_LIST;
    }
  }
  return [out ?? (list as DuckDBValue[]), outTypes];
}

/** A TabularStore session over one connection (the writer inside transact). */
function sessionOn(conn: DuckDBConnection): SqlSession {
  return {
    query: async (sql, params) => rowObjectsOf(await conn.runAndReadAll(sql, ...duckArgs(params))),
    execute: async (sql, params) => Number((await conn.run(sql, ...duckArgs(params))).rowsChanged),
  };
}

/** Runs fn inside BEGIN/COMMIT on conn; rolls back when fn (or the commit) throws. */
export async function inTransaction<T>(conn: DuckDBConnection, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
  try {
    const value = await fn(conn);
    await conn.run('COMMIT');
    return value;
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

export class Store implements TabularStore {
  readonly dialect = 'duckdb' as const;
  private writeChain: Promise<unknown> = Promise.resolve();
  private readonly idleReaders: DuckDBConnection[];
  private readonly readerWaiters: ((c: DuckDBConnection) => void)[] = [];
  private readonly seqs = new Map<string, bigint>();
  private readonly committedSeqs = new Map<string, bigint>();
  private readonly dedicated = new Map<string, { conn: Promise<DuckDBConnection>; chain: Promise<unknown> }>();
  private closed = false;

  private constructor(
    readonly dataDir: string,
    readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    readers: DuckDBConnection[],
    private readonly lanes: InsertLane[],
    readonly blobs: BlobStore,
  ) {
    this.idleReaders = readers;
  }

  static databasePath(dataDir: string): string {
    return join(dataDir, 'platform.duckdb');
  }

  static async open(dataDir: string, options: StoreOptions = {}): Promise<Store> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Data dirs and database files made before files were kept private get their modes tightened.
    chmodSync(dataDir, 0o700);
    for (const file of [Store.databasePath(dataDir), `${Store.databasePath(dataDir)}.wal`]) {
      if (existsSync(file)) chmodSync(file, 0o600);
    }
    const resources = options.resources ?? duckdbResourceSettings(dataDir);
    mkdirSync(resources.tempDirectory, { recursive: true, mode: 0o700 });
    const path = Store.databasePath(dataDir);
    const deadline = Date.now() + (options.lockWaitMs ?? 10_000);
    let instance: DuckDBInstance;
    for (;;) {
      try {
        instance = await DuckDBInstance.create(path, duckdbConfig(resources));
        break;
      } catch (err) {
        if (!/lock/i.test((err as Error).message)) throw err;
        if (Date.now() > deadline) throw new StoreLockedError(path, err);
        await sleep(100);
      }
    }
    const writer = await instance.connect();
    for (const sql of schemaStatements) await writer.run(sql);
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < (options.readers ?? 3); i++) {
      const reader = await instance.connect();
      // Late materialization makes a top-N (ORDER BY ... LIMIT <= 50) scan the table a second time to
      // fetch the other columns of the winning rows. Our pages already bound the scan to the row groups
      // that hold them, so the second pass only costs: the first page at 1M rows took 9 ms with it and
      // 6 ms without. The setting belongs to this connection only.
      await reader.run('SET late_materialization_max_rows = 0');
      readers.push(reader);
    }
    const lanes: InsertLane[] = [];
    for (let i = 0; i < (options.insertLanes ?? 2); i++) lanes.push({ conn: await instance.connect(), chain: Promise.resolve(), queued: 0 });
    const store = new Store(dataDir, instance, writer, readers, lanes, options.blobs ?? new FileBlobStore(join(dataDir, 'blobs')));
    for (const table of ['tabular_data', 'binary_data']) {
      const rows = await store.query(`SELECT coalesce(max(seq), 0) AS m FROM ${table}`);
      store.seqs.set(table, BigInt(rows[0].m as bigint));
      store.committedSeqs.set(table, BigInt(rows[0].m as bigint));
    }
    return store;
  }

  /** Runs fn on a reader connection. */
  async read<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = this.idleReaders.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.readerWaiters.push(resolve)));
    try {
      return await fn(conn);
    } finally {
      const waiter = this.readerWaiters.shift();
      if (waiter) waiter(conn);
      else this.idleReaders.push(conn);
    }
  }

  /** Runs fn on the single writer connection, after every earlier write has finished. */
  write<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const result = this.writeChain.then(() => fn(this.writer));
    this.writeChain = result.catch(() => undefined);
    return result;
  }

  /** How many insert lanes there are: insertWrite runs up to this many transactions at once (none: on the writer). */
  get insertLaneCount(): number {
    return this.lanes.length;
  }

  /**
   * Runs fn on the insert lane with the shortest queue: a writer connection of its own, after the
   * earlier writes of that lane. Only for transactions that insert rows and do nothing else: in DuckDB
   * an insert never conflicts with another transaction, so these run beside the main writer and each
   * other. What that buys is overlap: one lane's commit (the log sync, mostly waiting for the disk)
   * runs while another lane inserts.
   */
  insertWrite<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const lane = this.lanes.reduce((best, l) => (l.queued < best.queued ? l : best), this.lanes[0]);
    if (!lane) return this.write(fn);
    lane.queued++;
    const result = lane.chain.then(() => fn(lane.conn)).finally(() => lane.queued--);
    lane.chain = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs fn on a writer connection reserved for `name` (made on first use), after the earlier writes of
   * that name. For writes into a database file of their own, attached to this instance (the logs,
   * `cloud/parts/log-database.ts`): they never queue on the writer or the insert lanes that every
   * organization's calls share. close() waits for them and closes the connection.
   */
  dedicatedWrite<T>(name: string, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    let lane = this.dedicated.get(name);
    if (!lane) {
      const conn = this.instance.connect();
      lane = { conn, chain: conn.catch(() => undefined) };
      this.dedicated.set(name, lane);
    }
    const { conn } = lane;
    const result = lane.chain.then(async () => fn(await conn));
    lane.chain = result.catch(() => undefined);
    return result;
  }

  /** Runs fn inside BEGIN/COMMIT on the writer; rolls back when fn throws. */
  transaction<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.write((conn) => inTransaction(conn, fn));
  }

  /** TabularStore's transaction: the same as transaction(), with the backend-neutral session. */
  transact<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.transaction((conn) => fn(sessionOn(conn)));
  }

  /** A read query whose rows come back as JS values (BIGINT as bigint, TIMESTAMPTZ as Date, lists as arrays). */
  query(sql: string, params?: Params, types?: ParamTypes): Promise<Row[]> {
    return this.read(async (conn) => {
      return rowObjectsOf(await conn.runAndReadAll(sql, ...duckArgs(params, types)));
    });
  }

  /** A write statement; returns the number of rows it changed. */
  execute(sql: string, params?: Params, types?: ParamTypes): Promise<number> {
    return this.write(async (conn) => Number((await conn.run(sql, ...duckArgs(params, types))).rowsChanged));
  }

  /**
   * Reserves n consecutive seq values of a data table and returns the first. The values are unique
   * because this runs on the one JavaScript thread; reserve them in the order the rows will commit
   * (inside write(), or in the order writes are queued), so that later rows get higher values.
   */
  reserveSeq(table: 'tabular_data' | 'binary_data', n: number): bigint {
    const first = (this.seqs.get(table) ?? 0n) + 1n;
    this.seqs.set(table, first + BigInt(n) - 1n);
    return first;
  }

  /** Records that the rows up to seq (or some of them) are committed; see lastSeq. */
  seqCommitted(table: 'tabular_data' | 'binary_data', seq: bigint): void {
    if (seq > (this.committedSeqs.get(table) ?? 0n)) this.committedSeqs.set(table, seq);
  }

  /**
   * The highest seq of a committed row of a data table, as far as writers report it with
   * seqCommitted: the most recently written rows sit just below it. (Seqs are reserved before rows
   * commit, and two insert lanes may commit out of order, so higher ones may be in flight.)
   */
  lastSeq(table: 'tabular_data' | 'binary_data'): bigint {
    return this.committedSeqs.get(table) ?? 0n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const dedicated = [...this.dedicated.values()];
    await Promise.all([this.writeChain, ...this.lanes.map((l) => l.chain), ...dedicated.map((l) => l.chain)]);
    this.closed = true;
    await this.writer.run('CHECKPOINT').catch(() => undefined);
    const own = await Promise.all(dedicated.map((l) => l.conn.catch(() => undefined)));
    for (const conn of [this.writer, ...this.lanes.map((l) => l.conn), ...this.idleReaders, ...own]) conn?.closeSync();
    this.instance.closeSync();
  }
}
