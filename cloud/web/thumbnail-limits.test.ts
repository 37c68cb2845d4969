// Hostile-tenant suite, issue 27 finding 7 (thumbnails): content over PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES
// is refused from its metadata before it is read (six requests for a 400 MiB ".png" held 3.46 GB), and the
// thumbnail queue is fair between organizations (another organization's 32x32 thumbnail waited 23.9 s
// behind one organization's burst). Against the real platform-cloud; and the fair queue on its own.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startFixture, type CloudFixture, type Key, type Machine } from '../testing/tenancy-fixture.js';
import { noisyPng } from './testing-images.js';
import { ThumbnailError } from './thumbnail-error.js';
import { FairQueue } from './thumbnail-queue.js';

const MAX_SOURCE = 16 * 1024 * 1024;

let fx: CloudFixture;
test.before(async () => {
  fx = await startFixture({ PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES: String(MAX_SOURCE) });
});
test.after.always(async () => {
  await fx?.close();
});

const tokenOf = async (key: Key) => (await fx.client(key).connection.metadata()).get('authorization')[0] as string;

async function upload(machine: Machine, content: Uint8Array, ext: string): Promise<string> {
  return fx.partClient(machine).dataClient.fileUpload(content, machine.part_id, { fileExtension: ext });
}

async function get(id: string, authorization: string, size: number): Promise<{ status: number; body: string; at: number }> {
  const response = await fetch(`${fx.cloud.webUrl}thumbnails/${id}?size=${size}`, { headers: { authorization } });
  const body = response.headers.get('content-type')?.startsWith('text/') ? await response.text() : `${(await response.arrayBuffer()).byteLength} bytes`;
  return { status: response.status, body, at: performance.now() };
}

test.serial('content over PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES is refused from its metadata, naming the limit; smaller content still works', async (t) => {
  const owner = await tokenOf(fx.keys.ownerA);
  // 20 MiB of noise named ".png": the old code read it whole, six times, sent it to the child and failed to decode it.
  const big = await upload(fx.machineA1, randomBytes(20 * 1024 * 1024), '.png');
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => get(big, owner, 100 + i)));
  for (const a of answers) {
    t.is(a.status, 422, a.body);
    t.regex(
      a.body,
      new RegExp(`is ${20 * 1024 * 1024} bytes, larger than the ${MAX_SOURCE}-byte limit for thumbnails \\(PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES\\)`),
    );
  }
  // A type without thumbnails is refused from the metadata too.
  const text = await upload(fx.machineA1, randomBytes(1024 * 1024), '.bin');
  const refused = await get(text, owner, 64);
  t.is(refused.status, 415, refused.body);
  const small = await upload(fx.machineA1, noisyPng(64, 64, 3), '.png');
  t.is((await get(small, owner, 32)).status, 200);
});

test.serial("another organization's thumbnail is made after the job in progress, not after one organization's whole burst", async (t) => {
  const ownerA = await tokenOf(fx.keys.ownerA);
  const ownerB = await tokenOf(fx.keys.ownerB);
  // About 7.7 MB of noisy PNG (1600x1200): each takes the child a noticeable time to decode and scale.
  const heavy = await upload(fx.machineA1, noisyPng(1600, 1200, 7), '.png');
  const light = await upload(fx.machineB, noisyPng(32, 32, 8), '.png');
  // Six distinct sizes: six jobs, none answered from the cache.
  const burst = Array.from({ length: 6 }, (_, i) => get(heavy, ownerA, 200 + i));
  // Once the first of A's is answered the other five are waiting; then B asks.
  const first = await Promise.race(burst);
  t.is(first.status, 200, first.body);
  const b = await get(light, ownerB, 32);
  t.is(b.status, 200, b.body);
  const answersA = await Promise.all(burst);
  t.true(
    answersA.every((a) => a.status === 200),
    answersA.map((a) => a.status).join(' '),
  );
  const afterB = answersA.filter((a) => a.at > b.at).length;
  // Fair: B waits for the job in progress (and, while its own checks run on a loaded machine, perhaps one
  // or two more), so at least two of A's remaining five come after it; first in, first out, none did.
  t.log(`${afterB} of organization A's five waiting answers came after organization B's`);
  t.true(afterB >= 2, `${afterB} of organization A's answers came after organization B's (before: none)`);
});

test('the fair queue serves organizations in turn and refuses past the per-organization limit with 429', (t) => {
  const queue = new FairQueue<string>(3);
  for (const job of ['a1', 'a2', 'a3']) queue.push('A', job);
  const err = t.throws(() => queue.push('A', 'a4')) as ThumbnailError;
  t.is(err.errorCode, 'CLOUD_ERR_THUMBNAIL');
  t.is(err.httpStatus, 429);
  t.regex(err.message, /organization A already has 3 thumbnails waiting, the limit \(PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG\)/);
  queue.push('B', 'b1');
  queue.push('C', 'c1');
  queue.push('B', 'b2');
  t.is(queue.length, 6);
  t.deepEqual(queue.drain(), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  t.is(queue.shift(), undefined);
  // A's count is free again.
  t.notThrows(() => ['a5', 'a6', 'a7'].forEach((job) => queue.push('A', job)));
});
