// The PostgreSQL schema (pg-schema.ts) against the DuckDB one (schema.ts and the module tables on
// PostgreSQL), its migrations, and the day partitions of the readings (pg-readings.ts).
import test from 'ava';
import { ensureReleaseTables } from '../agent/releases.js';
import { ensureTrainingTables } from '../mltraining/training-tables.js';
import { ensurePartConfigTables } from '../parts/part-configs.js';
import { PartStatusBook } from '../parts/part-status.js';
import { DatabaseUsers } from '../query/pg/database-users.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { PgStore } from './pg-store.js';
import { ensureReadingsPartition, readingsPartitionName } from './pg-readings.js';
import { pgMigrations } from './pg-schema.js';
import type { TabularStore } from './tabular.js';

const [duckdb, postgres] = tabularBackends(test);

/** Every column of the store's tables as `table.column type NULL|NOT NULL`, in column order, in DuckDB's type names. */
async function columns(store: TabularStore, tables: string[]): Promise<string[]> {
  const rows = await store.query(
    `SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns
     WHERE table_schema = ? ORDER BY table_name, ordinal_position`,
    [store.dialect === 'duckdb' ? 'main' : 'public'],
  );
  const pgType = (r: Record<string, unknown>) => {
    if (r.data_type === 'ARRAY') return r.udt_name === '_varchar' ? 'VARCHAR[]' : `ARRAY ${String(r.udt_name)}`;
    return ({ text: 'VARCHAR', 'double precision': 'DOUBLE' } as Record<string, string>)[String(r.data_type)] ?? String(r.data_type).toUpperCase();
  };
  return rows
    .filter((r) => tables.includes(String(r.table_name)))
    .map(
      (r) =>
        `${String(r.table_name)}.${String(r.column_name)} ${store.dialect === 'duckdb' ? String(r.data_type) : pgType(r)} ${r.is_nullable === 'YES' ? 'NULL' : 'NOT NULL'}`,
    );
}

test('the PostgreSQL tables have the columns of the DuckDB ones: names, order, types and NOT NULL', async (t) => {
  const duck = await duckdb.open(t);
  await ensurePartConfigTables(duck);
  await ensureReleaseTables(duck);
  await PartStatusBook.open(duck);
  await new DatabaseUsers(duck).init();
  await ensureTrainingTables(duck);
  const pg = await postgres.open(t);
  const tables = (await duck.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY table_name`)).map((r) =>
    String(r.table_name),
  );
  t.true(tables.includes('tabular_data') && tables.includes('part_configs') && tables.includes('api_keys'));
  const expected = await columns(duck, tables);
  t.true(expected.length > 100);
  t.deepEqual(await columns(pg, tables), expected);
});

test('migrations are applied once per database, also by processes opening it at once', async (t) => {
  await postgres.open(t);
  const url = postgres.lastUrl!;
  // Four more stores open the same database together: each waits for the lock and finds nothing to do.
  const stores = await Promise.all(Array.from({ length: 4 }, () => PgStore.open(url, { poolSize: 1 })));
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  const applied = await stores[0].query('SELECT id FROM schema_migrations ORDER BY id');
  t.deepEqual(
    applied.map((r) => r.id),
    pgMigrations.map((m) => m.id),
  );
  // A migration added later is applied by the next process that opens the database.
  const later = [...pgMigrations, { id: '9999-test', statements: ['CREATE TABLE later_table (x integer)'] }];
  const [a, b] = await Promise.all([PgStore.open(url, { migrations: later }), PgStore.open(url, { migrations: later })]);
  t.teardown(() => Promise.all([a.close(), b.close()]));
  t.is((await a.query("SELECT count(*) AS n FROM schema_migrations WHERE id = '9999-test'"))[0].n, 1n);
  t.deepEqual(await b.query('SELECT * FROM later_table'), []);
  // The previous version, which does not know 9999-test, refuses the database instead of running on it.
  const old = await t.throwsAsync(PgStore.open(url, { poolSize: 1 }));
  t.regex(old!.message, /migration\(s\) 9999-test that this version of platform-cloud does not know: a newer version upgraded it/);
});

const insertReading = (store: TabularStore, synced: Date | null, upload: string) =>
  store.execute(`INSERT INTO tabular_data (seq, upload_id, organization_id, time_synced, data) VALUES (1, ?, 'org', ?, '{}')`, [upload, synced]);

const partitionOf = async (store: TabularStore, upload: string) =>
  String((await store.query('SELECT tableoid::regclass::text AS p FROM tabular_data WHERE upload_id = ?', [upload]))[0].p);

test("readings go to their UTC day's partition; rows that arrived before it existed are moved into it", async (t) => {
  const store = await postgres.open(t);
  const day = new Date('2026-11-27T23:59:59.999Z');
  t.is(readingsPartitionName(day), 'tabular_data_20261127');
  // Before the day has a partition, its rows land in the default one, as does a row without time_synced.
  await insertReading(store, day, 'early');
  await insertReading(store, null, 'no-time');
  t.is(await partitionOf(store, 'early'), 'tabular_data_default');
  // Two writers make sure of the same day at once: one makes it, moving the early row in.
  const names = await Promise.all([ensureReadingsPartition(store, day), ensureReadingsPartition(store, new Date('2026-11-27T00:00:00Z'))]);
  t.deepEqual(names, ['tabular_data_20261127', 'tabular_data_20261127']);
  t.is(await partitionOf(store, 'early'), 'tabular_data_20261127');
  t.is(await partitionOf(store, 'no-time'), 'tabular_data_default');
  await insertReading(store, new Date('2026-11-27T00:00:00Z'), 'midnight');
  await insertReading(store, new Date('2026-11-28T00:00:00Z'), 'next-day');
  t.is(await partitionOf(store, 'midnight'), 'tabular_data_20261127');
  t.is(await partitionOf(store, 'next-day'), 'tabular_data_default');
  t.is((await store.query('SELECT count(*) AS n FROM tabular_data'))[0].n, 4n, 'no row lost or doubled by the move');
  await t.throwsAsync(ensureReadingsPartition(await duckdb.open(t), day), { message: /PostgreSQL table layout/ });
});
