// The BlobStore contract (cloud/store/blob-store.ts) as one suite of tests, run against every store:
// the file store (cloud/store/blob-store.test.ts), S3 on s3rver (cloud/store/s3-blob-store.test.ts) and
// S3 on Ceph's radosgw (cloud/store/s3-blob-store-radosgw.test.ts). Each test gets a fresh, empty store
// (a new folder, or a new key prefix in the bucket), so the tests of one file run side by side.
import type { ExecutionContext, TestFn } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { removeOrphanBlobs } from '../store/blob-orphans.js';
import { FileBlobStore, openBlobWriter, uploadTempPattern, type BlobStore, type BlobWriter } from '../store/blob-store.js';
import { S3BlobStore, s3Client } from '../store/s3-blob-store.js';
import { minPartBytes } from '../store/s3-blob-writer.js';
import { Store } from '../store/store.js';
import type { S3Service } from './s3rver.js';

export interface ContractStore {
  store: BlobStore;
  /** Whether list() names the temp object of a streamed upload cut short (s3rver cannot list multipart uploads). */
  listsUnfinishedUploads: boolean;
  close(): Promise<void>;
}

/** Content large enough for several parts of an S3 multipart upload (5 MiB parts in these tests). */
export const multipartBytes = 12 * 1024 * 1024 + 123;

/** A fresh file store in a temp folder. */
export async function fileContractStore(): Promise<ContractStore> {
  const root = mkdtempSync(join(tmpdir(), 'blob-contract-'));
  return { store: new FileBlobStore(root), listsUnfinishedUploads: true, close: async () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Opens fresh stores on an S3 service: one bucket, made at the first call, and a new key prefix per
 * store. Parts are S3's smallest (5 MiB), so that multipartBytes takes three.
 */
export function s3ContractStores(service: S3Service, listsUnfinishedUploads: boolean): () => Promise<ContractStore> {
  const bucket = 'contract';
  let made: Promise<void> | undefined;
  return async () => {
    const options = { endpoint: service.endpoint, client: { credentials: service.credentials } };
    made ??= (async () => {
      const client = s3Client(options);
      await S3BlobStore.createBucket(client, bucket);
      client.destroy();
    })();
    await made;
    const store = await S3BlobStore.open(`s3://${bucket}/tenants/${randomUUID()}`, { ...options, partBytes: minPartBytes });
    return { store, listsUnfinishedUploads, close: async () => store.close() };
  };
}

async function listAll(store: BlobStore, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of store.list!(prefix)) keys.push(blob.key);
  return keys.sort();
}

/** Writes content in chunks of 64 KiB, as an upload's messages arrive. */
async function writeChunked(writer: BlobWriter, content: Buffer, chunkBytes = 64 * 1024): Promise<void> {
  for (let i = 0; i < content.byteLength; i += chunkBytes) await writer.write(content.subarray(i, i + chunkBytes));
}

/** Registers the contract's tests, named `<name>: ...`; open gives each test a fresh, empty store. */
export function blobStoreContract(test: TestFn, name: string, open: () => Promise<ContractStore>): void {
  const withStore = (title: string, body: (t: ExecutionContext, store: BlobStore, c: ContractStore) => Promise<void>) =>
    test(`${name}: ${title}`, async (t) => {
      const c = await open();
      try {
        await body(t, c.store, c);
      } finally {
        await c.close();
      }
    });

  withStore('put and get round trip small, empty and multi-MB content, by put and by a streamed writer', async (t, store) => {
    const small = Buffer.from('a reading of 31 bytes, or so...');
    const big = randomBytes(multipartBytes);
    await store.put('org/small', small);
    await store.put('org/empty', Buffer.alloc(0));
    await store.put('org/big', big);
    const writer = await openBlobWriter(store);
    await writeChunked(writer, big);
    t.is(writer.size, big.byteLength, 'the writer counts the bytes written');
    await writer.commit('org/streamed');
    const empty = await openBlobWriter(store);
    await empty.commit('org/streamed-empty');
    const tiny = await openBlobWriter(store);
    await tiny.write(small);
    await tiny.commit('org/streamed-small');
    expectContent(t, await store.get('org/small'), small, 'org/small');
    expectContent(t, await store.get('org/small', small.byteLength), small, 'org/small with a size hint');
    expectContent(t, await store.get('org/empty'), Buffer.alloc(0), 'org/empty');
    expectContent(t, await store.get('org/big'), big, 'org/big');
    expectContent(t, await store.get('org/streamed'), big, 'org/streamed');
    expectContent(t, await store.get('org/streamed-empty'), Buffer.alloc(0), 'org/streamed-empty');
    expectContent(t, await store.get('org/streamed-small', small.byteLength), small, 'org/streamed-small');
    if (store.list) {
      const want = ['org/big', 'org/empty', 'org/small', 'org/streamed', 'org/streamed-empty', 'org/streamed-small'];
      t.deepEqual(await listAll(store), want, 'list after the uploads: no temp objects remain');
    }
  });

  withStore('a put or a commit over an existing key replaces its content', async (t, store) => {
    await store.put('org/k', Buffer.from('first, and longer than the second'));
    await store.put('org/k', Buffer.from('second'));
    expectContent(t, await store.get('org/k'), Buffer.from('second'), 'after put over put');
    const big = randomBytes(multipartBytes);
    const writer = await openBlobWriter(store);
    await writeChunked(writer, big);
    await writer.commit('org/k');
    expectContent(t, await store.get('org/k'), big, 'after a streamed commit over it');
    await store.put('org/k', Buffer.from('third'));
    expectContent(t, await store.get('org/k'), Buffer.from('third'), 'after put over the streamed content');
  });

  withStore('get of a missing key gives undefined, as the file store does; delete is idempotent', async (t, store) => {
    expectContent(t, await store.get('org/never'), undefined, 'a key never written');
    expectContent(t, await store.get('never-org/never', 10), undefined, 'a key never written, with a size hint');
    await store.delete('org/never');
    await store.put('org/k', Buffer.from('x'));
    await store.delete('org/k');
    expectContent(t, await store.get('org/k'), undefined, 'a deleted key');
    await store.delete('org/k');
    expectContent(t, await store.get('org/k'), undefined, 'a key deleted twice');
  });

  withStore('getStream hands out whole content in chunks as it is read; a missing key is undefined, as for get', async (t, store) => {
    if (!store.getStream) return t.fail('the store cannot stream a read: downloads of model files need getStream()');
    const big = randomBytes(multipartBytes);
    await store.put('org/big', big);
    await store.put('org/empty', Buffer.alloc(0));
    const chunks: Buffer[] = [];
    const stream = await store.getStream('org/big');
    if (!stream) return t.fail('getStream of a stored key gave nothing');
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expectContent(t, Buffer.concat(chunks), big, 'org/big streamed');
    t.true(chunks.length > 1, `${multipartBytes} bytes arrive in several chunks, not as one buffer (got ${chunks.length})`);
    expectContent(t, await readStream(await store.getStream('org/empty')), Buffer.alloc(0), 'org/empty streamed');
    t.is(await store.getStream('org/never'), undefined, 'a key never written');
    await store.delete('org/empty');
    t.is(await store.getStream('org/empty'), undefined, 'a deleted key');
    await expectRejects(t, store.getStream('../outside'), "getStream('../outside')", /must be a relative path inside the store/);
    // A reader that stops after the first chunk destroys the stream: the store goes on working, and the
    // content is still whole for the next reader.
    const cut = (await store.getStream('org/big'))!;
    for await (const chunk of cut) {
      t.true((chunk as Buffer).byteLength > 0);
      break;
    }
    t.true(cut.destroyed, 'leaving the loop destroys the stream');
    expectContent(t, await readStream(await store.getStream('org/big')), big, 'org/big streamed after a reader stopped early');
  });

  withStore('list names every key with its modification time, and by prefix only the keys that start with it', async (t, store) => {
    if (!store.list) return t.fail('the store cannot list its objects: the orphan sweep needs list()');
    for (const key of ['org1/a', 'org1/b', 'org1/deep/c', 'org10/d', 'org2/e']) await store.put(key, Buffer.from(key));
    const now = Date.now();
    const all: Record<string, number> = {};
    for await (const blob of store.list()) all[blob.key] = blob.modifiedMs;
    t.deepEqual(Object.keys(all).sort(), ['org1/a', 'org1/b', 'org1/deep/c', 'org10/d', 'org2/e'], 'list()');
    for (const [key, ms] of Object.entries(all)) {
      // A sanity bound on the clock, not a timing: S3 dates to the second, and the store is local.
      t.true(Math.abs(ms - now) < 3600_000, `${key} was modified at ${ms}, not near now (${now})`);
    }
    const cases: [string, string[]][] = [
      ['org1/', ['org1/a', 'org1/b', 'org1/deep/c']],
      ['org1', ['org1/a', 'org1/b', 'org1/deep/c', 'org10/d']],
      ['org1/deep/', ['org1/deep/c']],
      ['org1/a', ['org1/a']],
      ['org3/', []],
      ['nothing/at/all/', []],
    ];
    for (const [prefix, want] of cases) {
      t.deepEqual(await listAll(store, prefix), want, `list('${prefix}')`);
    }
  });

  withStore('an aborted or failed upload leaves nothing readable, and a cut-short one only a temp object the sweep removes', async (t, store, c) => {
    const big = randomBytes(multipartBytes);
    const aborted = await openBlobWriter(store);
    await writeChunked(aborted, big);
    await aborted.abort();
    await aborted.abort();
    await expectRejects(t, aborted.write(Buffer.from('more')), 'a write after abort');
    await expectRejects(t, aborted.commit('org/aborted'), 'a commit after abort');
    expectContent(t, await store.get('org/aborted'), undefined, 'an aborted upload');

    const failed = await openBlobWriter(store);
    await writeChunked(failed, big);
    await expectRejects(t, failed.commit('../outside'), 'a commit to a key outside the store');
    await failed.abort();
    expectContent(t, await store.get('outside'), undefined, 'a failed commit');
    if (store.list) {
      t.deepEqual(await listAll(store), [], 'after an abort and a failed commit, list() names nothing');
    }

    // A writer that is never committed nor aborted, as after kill -9.
    const cut = await openBlobWriter(store);
    await writeChunked(cut, big.subarray(0, multipartBytes - 1000));
    if (store.list) {
      const keys = await listAll(store);
      t.true(
        keys.every((k) => uploadTempPattern.test(k)),
        `a cut-short upload leaves only temp objects, got [${keys.join()}]`,
      );
      t.is(keys.length, c.listsUnfinishedUploads ? 1 : 0, `a cut-short upload is listed as one temp object where the store can list it: [${keys.join()}]`);
      for (const key of keys) await store.delete(key);
      t.deepEqual(await listAll(store), [], 'deleting the temp objects leaves nothing');
    }
    // The writer's own abort, after the sweep removed its temp object, is still safe.
    await cut.abort();
  });

  withStore('concurrent writes of different keys all land whole', async (t, store) => {
    const contents = Array.from({ length: 16 }, (_, i) => randomBytes(1000 + i * 7919));
    const streamed = Array.from({ length: 3 }, () => randomBytes(6 * 1024 * 1024 + 17));
    await Promise.all([
      ...contents.map((content, i) => store.put(`org/put-${i}`, content)),
      ...streamed.map(async (content, i) => {
        const writer = await openBlobWriter(store);
        await writeChunked(writer, content);
        await writer.commit(`org/streamed-${i}`);
      }),
    ]);
    const got = await Promise.all([...contents.map((_, i) => store.get(`org/put-${i}`)), ...streamed.map((_, i) => store.get(`org/streamed-${i}`))]);
    [...contents, ...streamed].forEach((want, i) => expectContent(t, got[i], want, `concurrent write ${i}`));
  });

  withStore('keys of organization ids and odd characters keep their content apart; keys outside the store are refused', async (t, store) => {
    const org = randomUUID();
    const keys = [
      `${org}/${randomUUID()}`,
      `${org}/file name with spaces.png`,
      `${org}/ünïcödé 日本語 🤖`,
      `${org}/a+b=c&d;e,f`,
      `${org}/100%25 %2F`,
      `${org}/#hash?query~tilde`,
      `${org}/quote's "double" (paren) [bracket] {brace}`,
      `${org}/.hidden`,
      `${org}/back\\slash`,
      `${org}/*star!`,
    ];
    await Promise.all(keys.map((key) => store.put(key, Buffer.from(key))));
    for (const key of keys) expectContent(t, await store.get(key), Buffer.from(key), key);
    if (store.list) {
      t.deepEqual(await listAll(store, `${org}/`), [...keys].sort(), 'list names each key as it was written');
    }
    // Equivalent spellings of a key name the same object.
    await store.put(`${org}//twice/./slashed`, Buffer.from('same'));
    expectContent(t, await store.get(`${org}/twice/slashed`), Buffer.from('same'), 'a key with // and /./');
    for (const bad of ['', '.', '..', '../x', '/absolute', 'a/../../x', 'folder/']) {
      await expectRejects(t, store.put(bad, Buffer.from('x')), `put('${bad}')`, /must be a relative path inside the store/);
      await expectRejects(t, store.get(bad), `get('${bad}')`, /must be a relative path inside the store/);
    }
  });

  withStore('as the Store of the cloud, the orphan sweep removes exactly the old blobs that no row names', async (t, store, c) => {
    const dir = mkdtempSync(join(tmpdir(), 'blob-contract-store-'));
    const db = await Store.open(dir, { readers: 1, insertLanes: 0, blobs: store });
    try {
      await store.put('org1/named', Buffer.from('named'));
      await store.put('org1/orphan', Buffer.from('orphan'));
      await db.execute(`INSERT INTO binary_data (seq, binary_data_id, organization_id, blob_key) VALUES (1, 'named', 'org1', 'org1/named')`);
      const cut = await openBlobWriter(store);
      await writeChunked(cut, randomBytes(multipartBytes));
      t.teardown(() => cut.abort());
      // Everything is young now: nothing goes. An hour on, the unnamed ones are old enough.
      t.is(await removeOrphanBlobs(db, 60_000), 0, 'the sweep leaves blobs younger than the age');
      const removed = await removeOrphanBlobs(db, 60_000, Date.now() + 3600_000);
      t.is(removed, c.listsUnfinishedUploads ? 2 : 1, "the sweep removes the orphan and the cut-short upload's temp object");
      expectContent(t, await store.get('org1/named'), Buffer.from('named'), 'a named blob after the sweep');
      expectContent(t, await store.get('org1/orphan'), undefined, 'an orphan after the sweep');
      t.deepEqual(await listAll(store), ['org1/named'], 'after the sweep the store holds only the named blob');
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

function expectContent(t: ExecutionContext, got: Buffer | undefined, want: Buffer | undefined, what: string): void {
  if (want === undefined) {
    t.is(got, undefined, `${what}: expected nothing`);
    return;
  }
  // Buffer.equals rather than deepEqual: a diff of megabytes says nothing.
  t.true(
    Buffer.isBuffer(got) && got.equals(want),
    `${what}: expected ${want.byteLength} bytes, got ${got === undefined ? 'nothing' : `${got.byteLength} different ones`}`,
  );
}

async function readStream(stream: Readable | undefined): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function expectRejects(t: ExecutionContext, promise: Promise<unknown>, what: string, message?: RegExp): Promise<void> {
  await t.throwsAsync(promise, message ? { message } : undefined, `${what} should fail`);
}
