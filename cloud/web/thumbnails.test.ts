// The thumbnails route on the cloud's web port, against the real platform-cloud: the same checks as
// BinaryDataByIDs (token, organization, scope), grid-sized JPEGs of PNG and JPEG content, clear errors;
// and the decoding, scaling and cache rules on their own.
import test from 'ava';
import { decode as decodeJpeg } from 'jpeg-js';
import { encode as encodePng } from 'fast-png';
import { startFixture, type CloudFixture, type Key, type Machine } from '../testing/tenancy-fixture.js';
import { noisyJpeg, noisyPng } from './testing-images.js';
import { decodeImage, scaleToFit, ThumbnailCache, thumbnailOf } from './thumbnails.js';

let fx: CloudFixture;
test.before(async () => {
  fx = await startFixture();
});
test.after.always(async () => {
  await fx?.close();
});

async function tokenOf(key: Key): Promise<string> {
  return (await fx.client(key).connection.metadata()).get('authorization')[0] as string;
}

async function upload(machine: Machine, content: Uint8Array, ext: string): Promise<string> {
  const now = new Date();
  return fx.partClient(machine).dataClient.binaryDataCaptureUpload(content, machine.part_id, 'camera', 'cam', 'ReadImage', ext, [now, now]);
}

async function get(id: string, authorization?: string, query = ''): Promise<{ status: number; type: string; body: Buffer }> {
  const response = await fetch(`${fx.cloud.webUrl}thumbnails/${id}${query}`, { headers: authorization ? { authorization } : {} });
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: Buffer.from(await response.arrayBuffer()) };
}

test.serial('a PNG and a JPEG come back as JPEG thumbnails fitting the asked size, far smaller than the content', async (t) => {
  const owner = await tokenOf(fx.keys.ownerA);
  const png = noisyPng(800, 400, 5);
  const pngId = await upload(fx.machineA1, png, '.png');
  const jpeg = noisyJpeg(300, 600, 6);
  const jpegId = await upload(fx.machineA1, jpeg, '.jpg');

  const a = await get(pngId, owner);
  t.is(a.status, 200, a.body.toString());
  t.is(a.type, 'image/jpeg');
  const small = decodeJpeg(a.body, { useTArray: true });
  t.deepEqual([small.width, small.height], [160, 80], 'the default size, 160, keeping the aspect ratio');
  t.true(a.body.length * 20 < png.length, `${a.body.length} bytes for ${png.length}`);

  const b = await get(jpegId, owner, '?size=64');
  t.is(b.status, 200, b.body.toString());
  const tall = decodeJpeg(b.body, { useTArray: true });
  t.deepEqual([tall.width, tall.height], [32, 64]);
});

test.serial(
  'the key is checked like BinaryDataByIDs: no token, another organization, another location, bad sizes and unknown ids are refused with clear errors',
  async (t) => {
    const id = await upload(fx.machineA2, noisyPng(64, 64, 2), '.png');
    const missing = await get(id);
    t.is(missing.status, 401);
    t.regex(missing.body.toString(), /missing authorization metadata/);
    t.is((await get(id, 'Bearer not-a-token')).status, 401);

    const other = await get(id, await tokenOf(fx.keys.ownerB));
    t.is(other.status, 403);
    t.regex(other.body.toString(), /no access to that data|another organization/);
    // machineA2 is in location A2; a key of location A1 does not reach it, one of its machine does.
    t.is((await get(id, await tokenOf(fx.keys.operatorLocA1))).status, 403);
    t.is((await get(id, await tokenOf(fx.keys.ownerMachineA2))).status, 200);
    // Any role may read: an operator of the organization too.
    t.is((await get(id, await tokenOf(fx.keys.operatorA))).status, 200);

    const owner = await tokenOf(fx.keys.ownerA);
    const big = await get(id, owner, '?size=4096');
    t.is(big.status, 400);
    t.regex(big.body.toString(), /size must be an integer from 16 to 512 pixels, got "4096"/);
    t.is((await get(id, owner, '?size=1.5')).status, 400);
    const unknown = await get('00000000-0000-0000-0000-000000000000', owner);
    t.is(unknown.status, 404);
    t.regex(unknown.body.toString(), /no binary data with id/);

    // A part's own token may upload, not browse.
    const partToken = (await fx.partClient(fx.machineA2).connection.metadata()).get('authorization')[0] as string;
    t.is((await get(id, partToken)).status, 403);
  },
);

test.serial('content that is not an image is 415, an image that does not decode is 422; neither crashes the cloud', async (t) => {
  const owner = await tokenOf(fx.keys.ownerA);
  const text = await upload(fx.machineA1, Buffer.from('just some text'), '.txt');
  const a = await get(text, owner);
  t.is(a.status, 415);
  t.regex(a.body.toString(), /has no thumbnail: only image\/jpeg and image\/png/);
  const broken = await upload(fx.machineA1, Buffer.from('\x89PNG\r\n\x1a\nthis is not a png'), '.png');
  const b = await get(broken, owner);
  t.is(b.status, 422);
  t.regex(b.body.toString(), /image\/png content cannot be decoded/);
  // Still serving.
  t.is((await get(text, owner)).status, 415);
});

test('scaling averages each target pixel’s source box and never enlarges', (t) => {
  // 4x2: left half black, right half white -> 2x1: black, white.
  const data = new Uint8Array(4 * 2 * 4);
  for (let y = 0; y < 2; y++) for (let x = 0; x < 4; x++) data.set(x < 2 ? [0, 0, 0, 255] : [255, 255, 255, 255], (y * 4 + x) * 4);
  const half = scaleToFit({ width: 4, height: 2, data }, 2);
  t.deepEqual([half.width, half.height], [2, 1]);
  t.deepEqual([...half.data], [0, 0, 0, 255, 255, 255, 255, 255]);
  // Alternating columns average to grey.
  const stripes = new Uint8Array(2 * 1 * 4);
  stripes.set([0, 0, 0, 255, 200, 100, 50, 255]);
  t.deepEqual([...scaleToFit({ width: 2, height: 1, data: stripes }, 1).data], [100, 50, 25, 255]);
  // Small images keep their size.
  t.is(scaleToFit({ width: 2, height: 1, data: stripes }, 160).width, 2);
  // Transparent pixels are composed over white.
  const clear = new Uint8Array([10, 20, 30, 0]);
  t.deepEqual([...scaleToFit({ width: 1, height: 1, data: clear }, 16).data], [255, 255, 255, 255]);
});

test('PNG decoding handles grey, grey+alpha, 16-bit and palette images', (t) => {
  const grey = encodePng({ width: 2, height: 1, data: new Uint8Array([0, 200]), channels: 1, depth: 8 });
  t.deepEqual([...decodeImage(grey, 'image/png').data], [0, 0, 0, 255, 200, 200, 200, 255]);
  const greyAlpha = encodePng({ width: 1, height: 1, data: new Uint8Array([90, 128]), channels: 2, depth: 8 });
  t.deepEqual([...decodeImage(greyAlpha, 'image/png').data], [90, 90, 90, 128]);
  const deep = encodePng({ width: 1, height: 1, data: new Uint16Array([0xffff, 0x8000, 0]), channels: 3, depth: 16 });
  t.deepEqual([...decodeImage(deep, 'image/png').data], [255, 128, 0, 255]);
  const indexed = encodePng({
    width: 2,
    height: 1,
    data: new Uint8Array([1, 0]),
    channels: 1,
    depth: 8,
    palette: [
      [1, 2, 3],
      [250, 251, 252],
    ],
  });
  t.deepEqual([...decodeImage(indexed, 'image/png').data], [250, 251, 252, 255, 1, 2, 3, 255]);
  t.throws(() => thumbnailOf(new Uint8Array([1, 2, 3]), 'video/mp4', 160), { message: /video\/mp4 has no thumbnail/ });
});

test('the cache is bounded by bytes and drops the least recently used first', (t) => {
  const cache = new ThumbnailCache(10);
  cache.set('a', Buffer.alloc(4));
  cache.set('b', Buffer.alloc(4));
  t.truthy(cache.get('a'), 'a is now the most recently used');
  cache.set('c', Buffer.alloc(4));
  t.falsy(cache.get('b'), 'b was the least recently used');
  t.truthy(cache.get('a'));
  t.truthy(cache.get('c'));
  cache.set('huge', Buffer.alloc(11));
  t.falsy(cache.get('huge'), 'an entry larger than the whole cache is not kept');
  t.is(cache.size, 2);
});

test('a PNG whose header claims more than the megapixel limit is refused before decoding, in the thumbnail process, which then serves the next image', async (t) => {
  const { ThumbnailProcess } = await import('./thumbnail-process.js');
  const maker = new ThumbnailProcess();
  t.teardown(() => maker.close());
  // Signature, then IHDR: length 13, "IHDR", width 100000, height 100000 (10^10 pixels), and nothing else.
  const huge = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(huge, 0);
  huge.writeUInt32BE(13, 8);
  huge.write('IHDR', 12, 'latin1');
  huge.writeUInt32BE(100_000, 16);
  huge.writeUInt32BE(100_000, 20);
  const refused = await t.throwsAsync(maker.make(huge, 'image/png', 160));
  t.regex(refused?.message ?? '', /100000x100000, over 40 megapixels/);
  t.is((refused as { httpStatus?: number }).httpStatus, 422);
  const png = encodePng({ width: 4, height: 4, data: new Uint8Array(64).fill(200), channels: 4, depth: 8 });
  const thumbnail = await maker.make(png, 'image/png', 16);
  t.deepEqual([...thumbnail.subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
});
