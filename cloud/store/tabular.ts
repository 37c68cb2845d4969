// The seam between the cloud's modules and the database that holds their tables (issue 33). Two
// implementations: Store (store.ts, the embedded default: one DuckDB file, one writer) and PgStore
// (pg-store.ts, the scale-out mode: PostgreSQL through a connection pool, shared by equal processes).
// A module written against TabularStore runs on either; cloud/store/README.md describes the rules.
//
// Statements are plain SQL that both dialects accept. Parameters are written `?` or `$1`, `$2`, ...
// (not both in one statement); PgStore rewrites `?` to `$n`. Values go in and come out as the same JS
// types on both backends:
//   in:  null, boolean, number, bigint, string, Date (a TIMESTAMPTZ), string[] (a VARCHAR[]; write
//        CAST(? AS VARCHAR[]) where the statement does not say the type otherwise)
//   out: BIGINT as bigint, INTEGER and DOUBLE as number, TIMESTAMPTZ as Date, JSON as its text,
//        VARCHAR[] as string[], BOOLEAN as boolean, NULL as null.

import type { BlobStore } from './blob-store.js';

/** A statement parameter, the same on both backends. */
export type SqlValue = null | boolean | number | bigint | string | Date | readonly string[];

/** One result row: column name to value (see the types above). */
export type TabularRow = Record<string, unknown>;

/** What a statement runs on: the store itself, or the open transaction inside transact(). */
export interface SqlSession {
  /** Runs a statement and returns its rows. */
  query(sql: string, params?: readonly SqlValue[]): Promise<TabularRow[]>;
  /** Runs a statement and returns how many rows it changed. */
  execute(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export type Dialect = 'duckdb' | 'postgres';

/** A TabularStore with the BlobStore of the same cloud, for modules that read or write content too. */
export type StoreWithBlobs = TabularStore & { readonly blobs: BlobStore };

export interface TabularStore extends SqlSession {
  /**
   * Which SQL the store speaks, for the few statements that must differ (cloud/store/README.md lists
   * them). Modules branch on it only where no statement serves both.
   */
  readonly dialect: Dialect;
  /**
   * Runs fn in one transaction: all of its statements commit, or none (fn throws: rolled back). The
   * transactions of a store behave as if run one at a time, as on DuckDB's single writer: on
   * PostgreSQL they run SERIALIZABLE, and fn is run again when the database reports a conflict, so fn
   * must do nothing but statements on tx (no side effects that a second run would repeat).
   */
  transact<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T>;
}
