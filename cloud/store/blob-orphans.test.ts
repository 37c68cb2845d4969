// The sweep of orphaned blobs removes exactly the old files that no committed row names.
import test from 'ava';
import { existsSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobOrphanAgeMs, defaultBlobOrphanAgeS, removeOrphanBlobs } from './blob-orphans.js';
import { Store } from './store.js';

const hourAgo = () => new Date(Date.now() - 3600_000);

test('old unnamed blobs and temp files go; named ones and young ones stay', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blob-orphans-'));
  const store = await Store.open(dir, { readers: 1, insertLanes: 0 });
  try {
    const root = join(dir, 'blobs');
    for (const key of ['org1/named', 'org1/orphan', 'org1/young', 'org2/deep/orphan']) await store.blobs.put(key, Buffer.from(key));
    await store.blobs.put('.upload-cut-short.tmp', Buffer.from('partial'));
    await store.execute(`INSERT INTO binary_data (seq, binary_data_id, organization_id, blob_key) VALUES (1, 'named', 'org1', 'org1/named')`);
    for (const key of ['org1/named', 'org1/orphan', 'org2/deep/orphan', '.upload-cut-short.tmp']) utimesSync(join(root, key), hourAgo(), hourAgo());

    t.is(await removeOrphanBlobs(store, 60_000), 3);
    t.true(existsSync(join(root, 'org1/named')), 'a blob that a committed row names stays, however old');
    t.true(existsSync(join(root, 'org1/young')), 'a blob younger than the age stays (its upload may be in flight)');
    t.false(existsSync(join(root, 'org1/orphan')));
    t.false(existsSync(join(root, 'org2/deep/orphan')));
    t.false(existsSync(join(root, '.upload-cut-short.tmp')));
    t.deepEqual(await store.blobs.get('org1/named'), Buffer.from('org1/named'));
    // A second sweep finds nothing more.
    t.is(await removeOrphanBlobs(store, 60_000), 0);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a blob that only a dataset version's member names stays", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blob-orphans-'));
  const store = await Store.open(dir, { readers: 1, insertLanes: 0 });
  try {
    await store.blobs.put('org1/frozen', Buffer.from('frozen'));
    await store.execute(
      `INSERT INTO dataset_version_members (dataset_id, version, position, binary_data_id, split, tags, boxes, width, height, file_ext, mime_type, blob_key, file_size_bytes)
       VALUES ('d', 1, 0, 'gone', 'train', [], '[]', 1, 1, '.png', 'image/png', 'org1/frozen', 6)`,
    );
    utimesSync(join(dir, 'blobs', 'org1/frozen'), hourAgo(), hourAgo());
    t.is(await removeOrphanBlobs(store, 60_000), 0);
    t.deepEqual(await store.blobs.get('org1/frozen'), Buffer.from('frozen'));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the orphan age comes from PLATFORM_BLOB_ORPHAN_AGE_S, and a bad value is refused by name', (t) => {
  t.is(blobOrphanAgeMs({}), defaultBlobOrphanAgeS * 1000);
  t.is(blobOrphanAgeMs({ PLATFORM_BLOB_ORPHAN_AGE_S: '2.5' }), 2500);
  t.is(blobOrphanAgeMs({ PLATFORM_BLOB_ORPHAN_AGE_S: '0' }), 0);
  t.throws(() => blobOrphanAgeMs({ PLATFORM_BLOB_ORPHAN_AGE_S: '-1' }), { message: /PLATFORM_BLOB_ORPHAN_AGE_S/ });
  t.throws(() => blobOrphanAgeMs({ PLATFORM_BLOB_ORPHAN_AGE_S: 'soon' }), { message: /PLATFORM_BLOB_ORPHAN_AGE_S/ });
});
