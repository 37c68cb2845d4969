// The day partitions of tabular_data on PostgreSQL (pg-schema.ts: partitioned by time_synced, the
// cloud's clock when the upload arrived). A writer makes sure the day's partition exists before it
// inserts that day's rows (once per day and process: partitions are only ever added here); rows of a
// day without one land in tabular_data_default. Making a day's partition while the default one holds
// rows of that day would fail (PostgreSQL checks the default partition's rows against the new range),
// so those rows are moved into the new table before it is attached.
import type { PgStore } from './pg-store.js';
import type { SqlSession, TabularStore } from './tabular.js';

const DAY_MS = 86_400_000;

/** The UTC day that time falls in, as [start, end). */
export function dayOf(time: Date): { start: Date; end: Date } {
  const start = new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

/** The partition's table name: tabular_data_YYYYMMDD. */
export function readingsPartitionName(time: Date): string {
  return `tabular_data_${dayOf(time).start.toISOString().slice(0, 10).replace(/-/g, '')}`;
}

const ensured = new WeakMap<PgStore, Set<string>>();

const isPg = (store: TabularStore): store is PgStore => store.dialect === 'postgres' && 'transactAt' in store;

/** Makes sure the partition holding time's day exists; returns its name. */
export async function ensureReadingsPartition(store: TabularStore, time: Date): Promise<string> {
  if (!isPg(store)) throw new Error('readings partitions are a PostgreSQL table layout; DuckDB keeps one tabular_data table');
  const name = readingsPartitionName(time);
  let done = ensured.get(store);
  if (done?.has(name)) return name;
  const { start, end } = dayOf(time);
  await store.transactAt('READ COMMITTED', async (tx) => {
    // One process at a time makes a partition: two CREATEs of the same table at once fail on the catalog.
    await tx.execute('SELECT pg_advisory_xact_lock(hashtext($1))', [name]);
    const exists = await tx.query('SELECT 1 FROM pg_class WHERE relname = $1', [name]);
    if (exists.length > 0) return;
    await attachDay(tx, name, start, end);
  });
  if (!done) ensured.set(store, (done = new Set()));
  done.add(name);
  return name;
}

async function attachDay(tx: SqlSession, name: string, start: Date, end: Date): Promise<void> {
  const range = `FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`;
  const strays = await tx.query('SELECT 1 FROM tabular_data_default WHERE time_synced >= $1 AND time_synced < $2 LIMIT 1', [start, end]);
  if (strays.length === 0) {
    await tx.execute(`CREATE TABLE ${name} PARTITION OF tabular_data FOR VALUES ${range}`);
    return;
  }
  await tx.execute(`CREATE TABLE ${name} (LIKE tabular_data INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await tx.execute(
    `WITH moved AS (DELETE FROM tabular_data_default WHERE time_synced >= $1 AND time_synced < $2 RETURNING *)
     INSERT INTO ${name} SELECT * FROM moved`,
    [start, end],
  );
  await tx.execute(`ALTER TABLE tabular_data ATTACH PARTITION ${name} FOR VALUES ${range}`);
}
