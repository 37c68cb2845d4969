// Test helper: the same test against both TabularStore backends (cloud/store/tabular.ts), the embedded
// DuckDB Store in a temp data dir and PgStore on a PostgreSQL server of the test file's own
// (postgres.ts, started at the first PostgreSQL test and stopped after the file). Each store is fresh:
// a new data dir, or a new database on the shared server (with a file BlobStore in a temp dir).
// Nothing is skipped: without the postgresql package the PostgreSQL tests fail, naming it.
//
//   const backends = tabularBackends(test);
//   for (const backend of backends) test(`${backend.name}: ...`, async (t) => { const store = await backend.open(t); ... });
//
// tabularBackends(test, { icuLocale: 'en-US' }) makes the PostgreSQL databases sort text by that ICU
// locale (the test cluster's is C), for tests of orders returned (cloud/data/binary-data-edits.test.ts).
import type { ExecutionContext, TestFn } from 'ava';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { FileBlobStore } from '../store/blob-store.js';
import { PgStore, type PgStoreOptions } from '../store/pg-store.js';
import { Store } from '../store/store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { startPostgres, type PostgresServer } from './postgres.js';
import { removeDataDir, tempDataDir } from './spawn-cloud.js';

export interface TabularBackend {
  name: 'duckdb' | 'postgres';
  /** A fresh, empty store, closed (and its files or database removed) when the test ends. */
  open(t: ExecutionContext, options?: PgStoreOptions): Promise<StoreWithBlobs>;
  /** A fresh store for the whole test file (e.g. filled in test.before), closed after its last test. */
  openForFile(): Promise<StoreWithBlobs>;
  /** For PostgreSQL: the URL of the database of the store open() returned last (e.g. for a second process). */
  lastUrl?: string;
}

type Opened = { store: StoreWithBlobs; close: () => Promise<void> };

export interface TabularBackendsOptions {
  /**
   * PostgreSQL databases sort text by this ICU locale (e.g. 'en-US') instead of the test cluster's C
   * locale, as a production database often does: for tests that an order returned is the bytes'
   * order, as on DuckDB, whatever the database's collation.
   */
  icuLocale?: string;
}

export function tabularBackends(test: TestFn, options: TabularBackendsOptions = {}): TabularBackend[] {
  if (options.icuLocale !== undefined && !/^[A-Za-z0-9-]+$/.test(options.icuLocale)) throw new Error(`icuLocale ${options.icuLocale} is not a locale name`);
  const collation = options.icuLocale ? ` LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale}' LOCALE 'C' TEMPLATE template0` : '';
  let server: Promise<PostgresServer> | undefined;
  const forFile: (() => Promise<void>)[] = [];
  test.after.always(async () => {
    for (const close of forFile) await close();
    if (server) await (await server).stop();
  });
  const backend = (name: TabularBackend['name'], make: (options?: PgStoreOptions) => Promise<Opened>): TabularBackend => ({
    name,
    async open(t, options) {
      const { store, close } = await make(options);
      t.teardown(close);
      return store;
    },
    async openForFile() {
      const { store, close } = await make();
      forFile.push(close);
      return store;
    },
  });
  const duckdb = backend('duckdb', async () => {
    const dir = tempDataDir();
    const store = await Store.open(dir, { readers: 2, insertLanes: 1 });
    return {
      store,
      close: async () => {
        await store.close();
        removeDataDir(dir);
      },
    };
  });
  const postgres = backend('postgres', async (options) => {
    server ??= startPostgres();
    const { url } = await server;
    const database = `t_${randomUUID().replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}${collation}`);
    } finally {
      await admin.end();
    }
    const dbUrl = url.replace(/\/postgres$/, `/${database}`);
    postgres.lastUrl = dbUrl;
    // Blobs in files of a temp dir: the S3 store has its contract tests of its own.
    const dir = tempDataDir();
    const store = await PgStore.open(dbUrl, { poolSize: 4, blobs: new FileBlobStore(dir), ...options });
    return {
      store,
      close: async () => {
        await store.close();
        removeDataDir(dir);
      },
    };
  });
  return [duckdb, postgres];
}
