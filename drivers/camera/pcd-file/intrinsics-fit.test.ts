import test from 'ava';
import { readFileSync } from 'node:fs';
import { intrinsicsFromFov } from '../depth/intrinsics.js';
import { depthToPointCloud } from '../depth/projection.js';
import { readPcd } from '../../../plugins/formats/pcd/pcd-reader.js';
import { fitIntrinsics } from './intrinsics-fit.js';
import { pcdDataPath } from '../../testing/pcd-data.js';

test('recovers the intrinsics a depth map was projected with', (t) => {
  const k = { ...intrinsicsFromFov(320, 240, 70), ppx: 150.25, fy: 250 };
  const depth = Uint16Array.from({ length: 320 * 240 }, (_, i) => (i % 7 === 0 ? 0 : 800 + (i % 1000)));
  const fit = fitIntrinsics(depthToPointCloud({ width: 320, height: 240, depth }, k))!;
  for (const key of ['fx', 'fy', 'ppx', 'ppy'] as const) t.true(Math.abs(fit[key] - k[key]) < 1e-3, `${key} ${fit[key]} vs ${k[key]}`);
  t.is(fit.width, 320);
});

test('the Kinect clouds were made with fx = fy = 525 and a centred principal point', (t) => {
  const cloud = readPcd(readFileSync(pcdDataPath('milk_cartoon_all_small_clorox.pcd')));
  const fit = fitIntrinsics(cloud)!;
  t.true(Math.abs(fit.fx - 525) < 0.01 && Math.abs(fit.fy - 525) < 0.01);
  t.true(Math.abs(fit.ppx - 319.5) < 0.01 && Math.abs(fit.ppy - 239.5) < 0.01);
});

test('an unorganized cloud has no intrinsics', (t) => {
  t.is(fitIntrinsics({ width: 3, height: 1, positions: Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9) }), undefined);
});
