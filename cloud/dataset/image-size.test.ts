// Image sizes from headers, and the deterministic split.
import test from 'ava';
import { encode as encodeJpeg } from 'jpeg-js';
import { noisyJpeg, noisyPng } from '../web/testing-images.js';
import { imageSize } from './image-size.js';
import { checkSplit, splitMembers } from './split.js';

test('PNG and JPEG sizes come from their headers', (t) => {
  t.deepEqual(imageSize(noisyPng(640, 480)), { width: 640, height: 480 });
  t.deepEqual(imageSize(noisyJpeg(33, 17)), { width: 33, height: 17 });
  const rgba = new Uint8Array(5 * 7 * 4).fill(200);
  t.deepEqual(imageSize(encodeJpeg({ width: 5, height: 7, data: rgba }, 50).data), { width: 5, height: 7 });
});

test('GIF, BMP and WebP headers; anything else has no size', (t) => {
  const gif = Buffer.from('GIF89a\x0a\x00\x14\x00', 'latin1');
  t.deepEqual(imageSize(gif), { width: 10, height: 20 });
  const bmp = Buffer.alloc(30);
  bmp.write('BM', 0, 'latin1');
  bmp.writeInt32LE(12, 18);
  bmp.writeInt32LE(-34, 22);
  t.deepEqual(imageSize(bmp), { width: 12, height: 34 });
  const webp = Buffer.alloc(30);
  webp.write('RIFF', 0, 'latin1');
  webp.write('WEBPVP8X', 8, 'latin1');
  webp.writeUIntLE(99, 24, 3);
  webp.writeUIntLE(49, 27, 3);
  t.deepEqual(imageSize(webp), { width: 100, height: 50 });
  t.is(imageSize(Buffer.from('not an image')), undefined);
  t.is(imageSize(noisyPng(4, 4).subarray(0, 20)), undefined);
});

test('the same ids and seed give the same split; shares are rounded per part', (t) => {
  const ids = Array.from({ length: 100 }, (_, i) => `id-${i}`);
  const spec = { train: 0.7, valid: 0.2, test: 0.1, seed: 42 };
  const a = splitMembers(ids, spec);
  const b = splitMembers([...ids].reverse(), spec);
  t.deepEqual([...a.entries()].sort(), [...b.entries()].sort());
  const count = (m: Map<string, string>, s: string) => [...m.values()].filter((v) => v === s).length;
  t.deepEqual([count(a, 'train'), count(a, 'valid'), count(a, 'test')], [70, 20, 10]);
  const other = splitMembers(ids, { ...spec, seed: 43 });
  t.notDeepEqual([...a.entries()].sort(), [...other.entries()].sort());
});

test('a split must be shares in [0, 1] summing to 1; none gives 0.7/0.2/0.1', (t) => {
  t.deepEqual(checkSplit(undefined), { train: 0.7, valid: 0.2, test: 0.1, seed: 0 });
  t.deepEqual(checkSplit({ seed: 9 }), { train: 0.7, valid: 0.2, test: 0.1, seed: 9 });
  t.deepEqual(checkSplit({ train: 0.5, valid: 0.5, test: 0, seed: 1 }), { train: 0.5, valid: 0.5, test: 0, seed: 1 });
  t.throws(() => checkSplit({ train: 0.5, valid: 0.2, test: 0.2 }), { message: /must be 1, got 0\.89/ });
  t.throws(() => checkSplit({ train: 1.5, valid: -0.5, test: 0 }), { message: /split\.train must be a share in \[0, 1\]/ });
  t.throws(() => checkSplit({ train: Number.NaN, valid: 1, test: 0 }), { message: /split\.train/ });
});
