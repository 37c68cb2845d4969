import test from 'ava';
import { decodeDepthPng, DepthPngError, encodeDepthPng } from './depth-png.js';
import { intrinsicsFromFov } from './intrinsics.js';
import { depthToPointCloud } from './projection.js';
import { encode } from 'fast-png';

test('pinhole projection: x=(u-ppx)*z/fx, y=(v-ppy)*z/fy in mm; zero depth becomes a NaN point', (t) => {
  const k = { width: 3, height: 2, fx: 100, fy: 200, ppx: 1, ppy: 0.5 };
  const cloud = depthToPointCloud({ width: 3, height: 2, depth: Uint16Array.of(1000, 0, 2000, 500, 500, 500) }, k);
  t.is(cloud.width, 3);
  t.is(cloud.height, 2);
  t.deepEqual(Array.from(cloud.positions.slice(0, 3)), [-10, -2.5, 1000]);
  t.true(cloud.positions.slice(3, 6).every(Number.isNaN));
  t.deepEqual(Array.from(cloud.positions.slice(6, 9)), [20, -5, 2000]);
  t.deepEqual(Array.from(cloud.positions.slice(12, 15)), [0, 1.25, 500]);
  t.throws(() => depthToPointCloud({ width: 3, height: 3, depth: new Uint16Array(6) }, k), { instanceOf: RangeError });
});

test('intrinsics from a field of view: centred principal point, fx from the half angle', (t) => {
  const k = intrinsicsFromFov(640, 480, 90);
  t.is(k.ppx, 319.5);
  t.is(k.ppy, 239.5);
  t.true(Math.abs(k.fx - 320) < 1e-9 && k.fy === k.fx);
});

test('depth maps round-trip through 16-bit greyscale PNG, full range', (t) => {
  const depth = Uint16Array.from({ length: 64 * 48 }, (_, i) => (i * 977) % 65536);
  const png = encodeDepthPng({ width: 64, height: 48, depth });
  t.deepEqual(Array.from(png.subarray(1, 4)), [0x50, 0x4e, 0x47]); // "PNG"
  const back = decodeDepthPng(png);
  t.is(back.width, 64);
  t.is(back.height, 48);
  t.deepEqual(back.depth, depth);
});

test('an 8-bit or colour PNG is not a depth map', (t) => {
  const rgb = encode({ width: 2, height: 2, data: new Uint8Array(12), depth: 8, channels: 3 });
  t.throws(() => decodeDepthPng(rgb), { instanceOf: DepthPngError, message: /must be 16-bit greyscale, got 8-bit with 3 channel/ });
});
