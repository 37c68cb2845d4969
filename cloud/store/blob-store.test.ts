// The file store's writer puts chunks on disk as they come, and only commit makes them content; and the
// file store keeps the BlobStore contract (cloud/testing/blob-store-contract.ts).
import test from 'ava';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobStoreContract, fileContractStore } from '../testing/blob-store-contract.js';
import { FileBlobStore, openBlobWriter, type BlobStore } from './blob-store.js';

const temps = (root: string) => readdirSync(root).filter((f) => f.endsWith('.tmp'));

test('a blob writer streams to a temp file, commit stores it under the key, abort drops it', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'blob-writer-'));
  try {
    const blobs = new FileBlobStore(root);
    const writer = await openBlobWriter(blobs);
    await writer.write(Buffer.alloc(1000, 1));
    await writer.write(Buffer.alloc(500, 2));
    t.is(writer.size, 1500);
    const [temp] = temps(root);
    t.is(statSync(join(root, temp)).size, 1500, 'the chunks are on disk before commit');
    t.is(await blobs.get('org/a'), undefined);
    await writer.commit('org/a');
    t.deepEqual(await blobs.get('org/a'), Buffer.concat([Buffer.alloc(1000, 1), Buffer.alloc(500, 2)]));
    t.deepEqual(temps(root), []);

    const dropped = await openBlobWriter(blobs);
    await dropped.write(Buffer.from('x'));
    await dropped.abort();
    await dropped.abort();
    t.deepEqual(temps(root), []);
    await t.throwsAsync(dropped.write(Buffer.from('y')));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a store without a writer gets the collected chunks through put at commit', async (t) => {
  const stored = new Map<string, Buffer>();
  const blobs: BlobStore = {
    put: async (key, content) => void stored.set(key, Buffer.from(content)),
    get: async (key) => stored.get(key),
    delete: async (key) => void stored.delete(key),
  };
  const writer = await openBlobWriter(blobs);
  await writer.write(Buffer.from('ab'));
  await writer.write(Buffer.from('c'));
  t.is(stored.size, 0);
  await writer.commit('k');
  t.deepEqual(stored.get('k'), Buffer.from('abc'));
});

blobStoreContract(test, 'file store', fileContractStore);
