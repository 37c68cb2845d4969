// The logs' own database file (log-database.ts): where entries are stored, that their writes never wait
// for the store's shared writers, that an old part_logs of the main file is moved once, and that
// batches are written in turn between organizations.
import test from 'ava';
import { existsSync } from 'node:fs';
import { Store } from '../store/store.js';
import { timestampValue } from '../store/timestamp.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { logDatabasePath } from './log-database.js';
import { PartLogs, type StoredLogEntry } from './part-logs.js';

const entry = (message: string, time = Date.now()): StoredLogEntry => ({ time: new Date(time), level: 'info', loggerName: 'test', message, fields: {} });

async function mainTables(store: Store): Promise<string[]> {
  const rows = await store.query(`SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'part_logs'`);
  return rows.map((r) => String(r.table_name));
}

test('entries are stored in logs.duckdb, not in platform.duckdb, and are there after the store is reopened', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  let store = await Store.open(dir);
  const logs = await PartLogs.open(store);
  t.is(await logs.append('p1', [entry('one'), entry('two')], 'org-a'), 2);
  t.true(existsSync(logDatabasePath(dir)));
  t.deepEqual(await mainTables(store), []);
  await store.close();

  store = await Store.open(dir);
  t.teardown(() => store.close());
  const reopened = await PartLogs.open(store);
  t.deepEqual(
    (await reopened.query('p1', {})).logs.map((e) => e.message),
    ['two', 'one'],
  );
  // Seqs go on after the stored ones: a new entry of the same time sorts after them.
  const same = Date.now();
  await reopened.append('p1', [entry('three', same)], 'org-a');
  const seqs = await store.query('SELECT seq FROM logs.part_logs ORDER BY seq');
  t.deepEqual(
    seqs.map((r) => Number(r.seq)),
    [1, 2, 3],
  );
});

test("a log batch is stored while the store's writer and both insert lanes, which every organization's uploads share, are held", async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  const logs = await PartLogs.open(store);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  // Every shared writer busy until released, as under a flood of uploads or a long checkpoint.
  const busy = [store.write(() => held), store.insertWrite(() => held), store.insertWrite(() => held)];
  t.teardown(async () => {
    release();
    await Promise.all(busy);
    await store.close();
    removeDataDir(dir);
  });
  t.is(await logs.append('p1', [entry('while the lanes are busy')], 'org-a'), 1);
  t.deepEqual(
    (await logs.query('p1', {})).logs.map((e) => e.message),
    ['while the lanes are busy'],
  );
});

test('part_logs of the main file (earlier versions) is moved to logs.duckdb once, without duplicates', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  let store = await Store.open(dir);
  // The table as earlier versions made it, with two entries.
  await store.execute(`CREATE TABLE part_logs (
     part_id VARCHAR NOT NULL, time TIMESTAMPTZ NOT NULL, seq BIGINT NOT NULL, level VARCHAR NOT NULL,
     logger_name VARCHAR NOT NULL, message VARCHAR NOT NULL, fields VARCHAR NOT NULL)`);
  const now = Date.now();
  for (const [seq, message] of [
    [1, 'old one'],
    [2, 'old two'],
  ] as const) {
    await store.execute('INSERT INTO part_logs VALUES (?, ?, ?, ?, ?, ?, ?)', [
      'p1',
      timestampValue(new Date(now - 1000 + seq)),
      seq,
      'info',
      'old',
      message,
      '{}',
    ]);
  }
  const logs = await PartLogs.open(store);
  t.deepEqual(await mainTables(store), []);
  await logs.append('p1', [entry('new', now + 1000)], 'org-a');
  await store.close();

  // A second open (as after a crash between the copy and the drop, which recreated nothing) moves nothing twice.
  store = await Store.open(dir);
  t.teardown(() => store.close());
  const again = await PartLogs.open(store);
  t.deepEqual(
    (await again.query('p1', {})).logs.map((e) => e.message),
    ['new', 'old two', 'old one'],
  );
  t.deepEqual(
    (await store.query('SELECT seq FROM logs.part_logs ORDER BY seq')).map((r) => Number(r.seq)),
    [1, 2, 3],
  );
});

test('a copy cut off before the old table was dropped is completed without duplicates', async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  t.teardown(async () => {
    await store.close();
    removeDataDir(dir);
  });
  await PartLogs.open(store); // logs.part_logs exists
  // As if a crash came after the copy committed and before the drop: both tables hold the same rows.
  await store.execute(`CREATE TABLE part_logs AS SELECT * FROM logs.part_logs`);
  const row = ['p1', timestampValue(new Date()), 1, 'info', 'old', 'copied once', '{}'];
  await store.execute('INSERT INTO part_logs VALUES (?, ?, ?, ?, ?, ?, ?)', row);
  await store.dedicatedWrite('logs', (conn) => conn.run('INSERT INTO logs.part_logs VALUES (?, ?, ?, ?, ?, ?, ?)', row));
  const logs = await PartLogs.open(store);
  t.deepEqual(await mainTables(store), []);
  t.deepEqual(
    (await logs.query('p1', {})).logs.map((e) => e.message),
    ['copied once'],
  );
});

test('log batches are written in turn between organizations: a flood does not go ahead of another organization', async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  const logs = await PartLogs.open(store);
  t.teardown(async () => {
    await store.close();
    removeDataDir(dir);
  });
  // Hold the logs' writer so that every batch below waits, then see the order they are stored in.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = store.dedicatedWrite('logs', () => gate);
  const flood = Array.from({ length: 5 }, (_, i) => logs.append('flood-part', [entry(`flood ${i}`)], 'org-flood'));
  const quiet = logs.append('quiet-part', [entry('quiet')], 'org-quiet');
  await new Promise((resolve) => setImmediate(resolve));
  release();
  await Promise.all([held, ...flood, quiet]);
  const order = await store.query('SELECT message FROM logs.part_logs ORDER BY seq');
  t.deepEqual(
    order.map((r) => r.message),
    ['flood 0', 'quiet', 'flood 1', 'flood 2', 'flood 3', 'flood 4'],
  );
});
