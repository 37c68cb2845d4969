// Test helper: the same test against both TabularStore backends (cloud/store/tabular.ts), the embedded
// DuckDB Store in a temp data dir and PgStore on a PostgreSQL server of the test file's own
// (postgres.ts, started at the first PostgreSQL test and stopped after the file). Each store is fresh:
// a new data dir, or a new database on the shared server (with a file BlobStore in a temp dir). Nothing is skipped: without the postgresql
// package the PostgreSQL tests fail, naming it.
//
//   const backends = tabularBackends(test);
//   for (const backend of backends) test(`${backend.name}: ...`, async (t) => { const store = await backend.open(t); ... });
import type { ExecutionContext, TestFn } from 'ava';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgStore, type PgStoreOptions } from '../store/pg-store.js';
import { Store } from '../store/store.js';
import { FileBlobStore } from '../store/blob-store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { startPostgres, type PostgresServer } from './postgres.js';
import { removeDataDir, tempDataDir } from './spawn-cloud.js';

export interface TabularBackend {
  name: 'duckdb' | 'postgres';
  /** A fresh, empty store, closed (and its files or database removed) when the test ends. */
  open(t: ExecutionContext, options?: PgStoreOptions): Promise<StoreWithBlobs>;
  /** For PostgreSQL: the URL of the database of the store open() returned last (e.g. for a second process). */
  lastUrl?: string;
}

export function tabularBackends(test: TestFn): TabularBackend[] {
  let server: Promise<PostgresServer> | undefined;
  test.after.always(async () => {
    if (server) await (await server).stop();
  });
  const duckdb: TabularBackend = {
    name: 'duckdb',
    async open(t) {
      const dir = tempDataDir();
      const store = await Store.open(dir, { readers: 2, insertLanes: 1 });
      t.teardown(async () => {
        await store.close();
        removeDataDir(dir);
      });
      return store;
    },
  };
  const postgres: TabularBackend = {
    name: 'postgres',
    async open(t, options) {
      server ??= startPostgres();
      const { url } = await server;
      const database = `t_${randomUUID().replace(/-/g, '')}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${database}`);
      } finally {
        await admin.end();
      }
      const dbUrl = url.replace(/\/postgres$/, `/${database}`);
      postgres.lastUrl = dbUrl;
      // Blobs in files of a temp dir: the S3 store has its contract tests of its own.
      const dir = tempDataDir();
      const store = await PgStore.open(dbUrl, { poolSize: 4, blobs: new FileBlobStore(dir), ...options });
      t.teardown(async () => {
        await store.close();
        removeDataDir(dir);
      });
      return store;
    },
  };
  return [duckdb, postgres];
}
