// The orphan-blob sweep on either TabularStore, and in the scale-out mode led by one process: two
// sweepers on one PostgreSQL database and one blob store elect one leader (pg-leader.ts), only it
// sweeps, and when it stops the other takes over. Each sweep removes only old blobs that no row names.
import test from 'ava';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../core/serving/testing/eventually.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { FileBlobStore } from './blob-store.js';
import { removeOrphanBlobs, startOrphanSweep } from './blob-orphans.js';
import { PgStore } from './pg-store.js';
import { Store } from './store.js';
import type { StoreWithBlobs } from './tabular.js';

const [duckdb, postgres] = tabularBackends(test);
const hourAgo = () => new Date(Date.now() - 3600_000);

/** Puts blobs (aged an hour unless young) into a file blob store rooted at dir. */
async function putBlobs(store: StoreWithBlobs, dir: string, keys: string[], young: string[] = []): Promise<void> {
  for (const key of [...keys, ...young]) await store.blobs.put(key, Buffer.from(key));
  for (const key of keys) utimesSync(join(dir, key), hourAgo(), hourAgo());
}

const exists = async (store: StoreWithBlobs, key: string) => (await store.blobs.get(key)) !== undefined;

for (const backend of [duckdb, postgres]) {
  test(`${backend.name}: the sweep removes old blobs no row names, and keeps named, frozen, sealed and young ones`, async (t) => {
    const dir = tempDataDir();
    t.teardown(() => removeDataDir(dir));
    const store = await backend.open(t, { blobs: new FileBlobStore(dir) });
    // The DuckDB Store keeps its own file blob store in its data dir; the PostgreSQL one was given dir's.
    const blobsDir = store instanceof Store ? join(store.dataDir, 'blobs') : dir;
    await putBlobs(store, blobsDir, ['o1/named', 'o1/frozen', 'o1/orphan', 'o2/deep/orphan'], ['o1/young']);
    await store.execute(`INSERT INTO binary_data (seq, binary_data_id, organization_id, blob_key) VALUES (1, 'named', 'o1', 'o1/named')`);
    await store.execute(
      `INSERT INTO dataset_version_members (dataset_id, version, position, binary_data_id, split, tags, boxes, width, height, file_ext, mime_type, blob_key, file_size_bytes)
       VALUES ('d', 1, 0, 'gone', 'train', CAST(? AS VARCHAR[]), '[]', 1, 1, '.png', 'image/png', 'o1/frozen', 6)`,
      [[]],
    );
    if (store.dialect === 'postgres') {
      // A sealed readings segment is named by its manifest row.
      await putBlobs(store, blobsDir, ['sealed-readings/2026-01-01/abc.parquet']);
      await store.execute(`INSERT INTO tabular_segments VALUES ('o1', ?, 'sealed-readings/2026-01-01/abc.parquet', 1, 'abc', 10, ?)`, [hourAgo(), hourAgo()]);
    }
    t.is(await removeOrphanBlobs(store, 60_000), 2);
    if (store.dialect === 'postgres') t.true(await exists(store, 'sealed-readings/2026-01-01/abc.parquet'));
    t.deepEqual(await Promise.all(['o1/named', 'o1/frozen', 'o1/young', 'o1/orphan', 'o2/deep/orphan'].map((k) => exists(store, k))), [
      true,
      true,
      true,
      false,
      false,
    ]);
    // Without an election (the embedded default) the process sweeps alone, at once.
    const swept: number[] = [];
    const sweep = startOrphanSweep(store, { minAgeMs: 0, intervalMs: 60_000, onSwept: (n) => swept.push(n) });
    t.teardown(() => sweep.stop());
    await eventually(
      () => swept,
      (s) => s.length === 1,
      { what: 'the first sweep' },
    );
    t.deepEqual(swept, [1], 'at age 0 the young unnamed blob goes too');
    t.true(sweep.leading);
    await sweep.stop();
    t.false(sweep.leading);
  });
}

test('postgres: two processes elect one sweeper; only it sweeps, and the other takes over when it stops', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  const a = await postgres.open(t, { blobs: new FileBlobStore(dir) });
  const database = String((await a.query('SELECT current_database() AS d'))[0].d);
  const url = postgres.lastUrl!.replace(/\/[^/]+$/, `/${database}`);
  const b = await PgStore.open(url, { poolSize: 2, blobs: a.blobs });
  t.teardown(() => b.close());
  await putBlobs(a, dir, ['o/named', 'o/orphan-1']);
  await a.execute(`INSERT INTO binary_data (seq, binary_data_id, organization_id, blob_key) VALUES (1, 'named', 'o', 'o/named')`);

  const swept = { a: 0, b: 0 };
  const options = (who: 'a' | 'b') => ({
    minAgeMs: 60_000,
    intervalMs: 100,
    // A leader's session check times out after 10 polls (at least 2 s): 400 ms keeps a loaded machine
    // from taking a slow check for a lost lead, which would let the other sweep too.
    election: { url, pollMs: 400 },
    onSwept: () => swept[who]++,
  });
  const sweepers = { a: startOrphanSweep(a, options('a')), b: startOrphanSweep(b, options('b')) };
  t.teardown(() => Promise.all([sweepers.a.stop(), sweepers.b.stop()]));
  await eventually(
    () => swept.a + swept.b,
    (n) => n >= 3,
    { what: 'three sweeps' },
  );
  const leader = swept.a > 0 ? 'a' : 'b';
  const follower = leader === 'a' ? 'b' : 'a';
  t.is(swept[follower], 0, 'the follower has not swept');
  t.true(sweepers[leader].leading);
  t.false(sweepers[follower].leading);
  t.false(await exists(a, 'o/orphan-1'));
  t.true(await exists(a, 'o/named'));

  await sweepers[leader].stop();
  await putBlobs(a, dir, ['o/orphan-2']);
  await eventually(
    () => swept[follower],
    (n) => n >= 1,
    { what: 'the other process to take over and sweep' },
  );
  t.true(sweepers[follower].leading);
  await eventually(
    () => exists(a, 'o/orphan-2'),
    (e) => !e,
    { what: 'the new leader to remove the new orphan' },
  );
  t.true(await exists(a, 'o/named'));
});
