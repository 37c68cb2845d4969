// TabularStore on PostgreSQL (issue 33's scale-out mode): a pool of connections shared by the
// statements of this process, with other processes writing the same database at once. Statements and
// values follow tabular.ts (pg-sql.ts does the rewriting); the schema comes from pg-schema.ts, applied
// when the store opens.
//
// Transactions run SERIALIZABLE. On DuckDB every transaction of the cloud runs on its one writer, one
// after another, so a read-then-write (the next revision number, "no pipeline of that name yet") can
// never interleave with another; SERIALIZABLE gives the same outcome across processes, by failing one
// of two transactions that would interleave (SQLSTATE 40001, or 40P01 for a deadlock). That one is
// run again, up to maxAttempts times, after a short random wait.
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { duckdbLikeTypes, numberedParameters } from './pg-sql.js';
import { applyMigrations, pgMigrations, type Migration } from './pg-schema.js';
import type { BlobStore } from './blob-store.js';
import type { SqlSession, SqlValue, TabularRow, TabularStore } from './tabular.js';

export interface PgStoreOptions {
  /** The blob store of the same cloud (S3 in the scale-out mode); see blobs. */
  blobs?: BlobStore;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Runs of a transaction that meets a serialization conflict, the first included. Default 30. */
  maxAttempts?: number;
  /** The migrations to apply at open (tests). Default: all of pg-schema.ts. */
  migrations?: readonly Migration[];
}

/** SQLSTATEs after which a transaction may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);

const isRetryable = (err: unknown) => RETRYABLE.has((err as { code?: string }).code ?? '');

function sessionOn(client: pg.PoolClient): SqlSession {
  return {
    query: async (sql, params) => (await client.query(numberedParameters(sql), params as SqlValue[] | undefined)).rows as TabularRow[],
    execute: async (sql, params) => (await client.query(numberedParameters(sql), params as SqlValue[] | undefined)).rowCount ?? 0,
  };
}

export class PgStore implements TabularStore {
  readonly dialect = 'postgres' as const;
  private closed = false;
  /** Run at close, before the pool ends (pg-notify.ts closes its listening connection). */
  private readonly closers: (() => Promise<void>)[] = [];

  private constructor(
    private readonly pool: pg.Pool,
    private readonly maxAttempts: number,
    private readonly blobStore: BlobStore | undefined,
    /** The URL the store was opened with, for a LeaderElection (pg-leader.ts) of the same database. */
    readonly url: string,
  ) {}

  /**
   * A connection of its own, outside the pool, for work that holds a session open (LISTEN in
   * pg-notify.ts); the caller ends it. Values come back as from the pool.
   */
  async connectDedicated(options: { applicationName?: string; queryTimeoutMs?: number } = {}): Promise<pg.Client> {
    if (this.closed) throw new Error('the store is closed');
    const client = new pg.Client({
      connectionString: this.url,
      types: duckdbLikeTypes,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      query_timeout: options.queryTimeoutMs,
      application_name: options.applicationName?.slice(0, 63),
    });
    // A lost connection emits 'error' (then 'end'); without a listener it would end the process.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** Runs fn when the store closes, before its connections end. */
  onClose(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  /** The BlobStore given to open(), for modules that need both (StoreWithBlobs). */
  get blobs(): BlobStore {
    if (!this.blobStore) throw new Error('this PgStore was opened without a BlobStore (PgStoreOptions.blobs)');
    return this.blobStore;
  }

  /** Connects to url (postgres://...), applies the schema, and returns the store. */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const maxAttempts = options.maxAttempts ?? 30;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`maxAttempts must be a whole number >= 1, got ${maxAttempts}`);
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, types: duckdbLikeTypes });
    // An idle connection that fails (the server restarted) is dropped by the pool; without a listener
    // its error would end the process.
    pool.on('error', () => undefined);
    const store = new PgStore(pool, maxAttempts, options.blobs, url);
    try {
      await store.transactAt('READ COMMITTED', (tx) => applyMigrations(tx, options.migrations ?? pgMigrations));
    } catch (err) {
      await pool.end();
      throw err;
    }
    return store;
  }

  async query(sql: string, params?: readonly SqlValue[]): Promise<TabularRow[]> {
    return (await this.pool.query(numberedParameters(sql), params as SqlValue[] | undefined)).rows as TabularRow[];
  }

  async execute(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return (await this.pool.query(numberedParameters(sql), params as SqlValue[] | undefined)).rowCount ?? 0;
  }

  /**
   * A statement with node-postgres values of any kind (arrays of dates or numbers, for unnest), for
   * PostgreSQL-only code such as the readings ingest; returns the count of changed rows.
   */
  async executeRaw(sql: string, values: readonly unknown[]): Promise<number> {
    return (await this.pool.query(sql, values as unknown[])).rowCount ?? 0;
  }

  async transact<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transactAt('SERIALIZABLE', fn);
      } catch (err) {
        if (!isRetryable(err) || attempt >= this.maxAttempts) throw err;
        // Random, growing waits, so that the transactions that collided do not collide again.
        await sleep(Math.random() * Math.min(200, 2 ** attempt));
      }
    }
  }

  /**
   * One run of fn in a transaction at the given isolation, without retries. READ COMMITTED is for
   * work done under an advisory lock (schema changes, partitions): each statement then sees what the
   * lock's previous holder committed, where a SERIALIZABLE snapshot, taken at the lock statement,
   * would not.
   */
  async transactAt<T>(isolation: 'SERIALIZABLE' | 'READ COMMITTED', fn: (tx: SqlSession) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the store is closed');
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query(`BEGIN ISOLATION LEVEL ${isolation}`);
      try {
        const value = await fn(sessionOn(client));
        await client.query('COMMIT');
        return value;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: the pool closes it.
      client.release(broken);
    }
  }

  /** Waits for the statements under way, then closes every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const close of this.closers.splice(0)) await close().catch(() => undefined);
    await this.pool.end();
  }
}
