// Test helper: a second PgStore on the database of a store that tabularBackends' postgres backend
// opened, as a second cloud process would open it (its own pool, its own listening connection), closed
// when the test ends. The URL comes from the store itself: the backend's lastUrl may name a database
// that a concurrent test of the same file opened since.
import type { ExecutionContext } from 'ava';
import { PgStore, type PgStoreOptions } from '../store/pg-store.js';
import type { TabularStore } from '../store/tabular.js';
import type { TabularBackend } from './tabular-backends.js';

export async function sameDatabase(t: ExecutionContext, backend: TabularBackend, store: TabularStore, options: PgStoreOptions = {}): Promise<PgStore> {
  if (!backend.lastUrl) throw new Error('sameDatabase: open a store of the postgres backend first');
  const [{ db }] = await store.query('SELECT current_database() AS db');
  const second = await PgStore.open(backend.lastUrl.replace(/\/[^/]+$/, `/${String(db)}`), { poolSize: 2, ...options });
  t.teardown(() => second.close());
  return second;
}
