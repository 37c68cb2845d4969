// The scale-out query node's local cache of sealed segments (segment-cache.ts): fetched once by content
// hash, checked against it, bounded by evicting the least recently used files that no query holds.
import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileBlobStore } from '../../store/blob-store.js';
import { SegmentCache, type Segment } from './segment-cache.js';

async function setup(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'segment-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const blobs = new FileBlobStore(join(dir, 'blobs'));
  const put = async (name: string, size: number): Promise<Segment> => {
    const content = Buffer.alloc(size, name);
    const hash = createHash('sha256').update(content).digest('hex');
    const key = `sealed-readings/2026-11-01/${hash}.parquet`;
    await blobs.put(key, content);
    return { key, hash, bytes: size };
  };
  return { dir, blobs, put };
}

test('a segment is fetched once, as a file named by its hash holding its bytes', async (t) => {
  const { dir, blobs, put } = await setup(t);
  const a = await put('a', 1000);
  const cache = new SegmentCache(join(dir, 'cache'), blobs, 10_000);
  const first = await cache.pin([a]);
  const second = await cache.pin([a]);
  t.deepEqual(first.paths, [cache.pathOf(a.hash)]);
  t.deepEqual(second.paths, first.paths);
  t.is(cache.fetches, 1);
  t.deepEqual(readFileSync(first.paths[0]), Buffer.alloc(1000, 'a'));
  first.release();
  second.release();
  // A new cache over the same folder (a restarted process) keeps what is there.
  const again = new SegmentCache(join(dir, 'cache'), blobs, 10_000);
  await again.pin([a]);
  t.is(again.fetches, 0);
  t.is(again.bytes, 1000);
});

test('past its bound, the least recently used unheld files are removed; held ones stay', async (t) => {
  const { dir, blobs, put } = await setup(t);
  const [a, b, c] = [await put('a', 400), await put('b', 400), await put('c', 400)];
  const cache = new SegmentCache(join(dir, 'cache'), blobs, 1000);
  const held = await cache.pin([a]);
  (await cache.pin([b])).release();
  (await cache.pin([c])).release();
  // 1200 bytes > 1000: b is the least recently used file nobody holds (a is held).
  t.true(existsSync(cache.pathOf(a.hash)));
  t.false(existsSync(cache.pathOf(b.hash)));
  t.true(existsSync(cache.pathOf(c.hash)));
  t.is(cache.bytes, 800);
  held.release();
  // Fetching b again evicts a, now the least recently used.
  (await cache.pin([b])).release();
  t.false(existsSync(cache.pathOf(a.hash)));
  t.is(cache.fetches, 4);
});

test('an object that does not match its hash, or is missing, is an error and leaves no file', async (t) => {
  const { dir, blobs, put } = await setup(t);
  const a = await put('a', 100);
  await blobs.put(a.key, Buffer.alloc(100, 'z'));
  const cache = new SegmentCache(join(dir, 'cache'), blobs, 10_000);
  await t.throwsAsync(cache.pin([a]), { message: /does not match its content hash/ });
  t.false(existsSync(cache.pathOf(a.hash)));
  await t.throwsAsync(cache.pin([{ ...a, key: 'sealed-readings/none.parquet' }]), { message: /missing from the blob store/ });
  t.is(cache.bytes, 0);
});

test('temp files an interrupted fetch left are removed at start, and a hash that is not one is refused', async (t) => {
  const { dir, blobs } = await setup(t);
  const folder = join(dir, 'cache');
  new SegmentCache(folder, blobs, 10);
  writeFileSync(join(folder, '.fetch-x.tmp'), 'partial');
  new SegmentCache(folder, blobs, 10);
  t.false(existsSync(join(folder, '.fetch-x.tmp')));
  t.throws(() => new SegmentCache(folder, blobs, 10).pathOf('../../etc/passwd'), { message: /64 hex digits/ });
});
