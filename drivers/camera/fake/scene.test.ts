import test from 'ava';
import { intrinsicsFromFov } from '../depth/intrinsics.js';
import { depthToPointCloud } from '../depth/projection.js';
import { HIT_BOX0, HIT_FLOOR, HIT_NOTHING, renderScene, type Scene } from './scene.js';

const k = intrinsicsFromFov(160, 120, 60);

test('a level camera sees the floor below the horizon only, at the analytic depth z = h * fy / (v - ppy)', (t) => {
  const scene: Scene = { intrinsics: k, cameraHeightMm: 1000, tiltDegs: 0, boxes: [], maxDepthMm: 60000 };
  const { map, labels } = renderScene(scene);
  const row = (v: number) => v * k.width + 80;
  t.is(labels[row(10)], HIT_NOTHING);
  t.is(map.depth[row(10)], 0);
  t.is(labels[row(100)], HIT_FLOOR);
  t.is(map.depth[row(100)], Math.round((1000 * k.fy) / (100 - k.ppy)));
});

test('the floor seen by a camera pitched down by theta is a plane tilted theta from (0,-1,0)', (t) => {
  const scene: Scene = { intrinsics: k, cameraHeightMm: 1200, tiltDegs: 25, boxes: [] };
  const cloud = depthToPointCloud(renderScene(scene).map, k);
  // Two floor points on the same image column far apart: the slope of y over z gives the tilt.
  const at = (v: number) => cloud.positions.subarray((v * k.width + 80) * 3, (v * k.width + 80) * 3 + 3);
  const a = at(70),
    b = at(115);
  const tilt = (Math.atan2(b[1] - a[1], a[2] - b[2]) * 180) / Math.PI; // farther floor is higher (smaller y)
  t.true(Math.abs(tilt - 25) < 0.5, `tilt ${tilt}`);
});

test('a box in front of the camera is hit, with its height above the floor, and occludes the floor', (t) => {
  const scene: Scene = { intrinsics: k, cameraHeightMm: 800, tiltDegs: 20, boxes: [{ x: 0, z: 2000, width: 400, height: 300, depth: 400 }] };
  const { labels, heights } = renderScene(scene);
  let boxPixels = 0;
  let maxHeight = 0;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] !== HIT_BOX0) continue;
    boxPixels++;
    maxHeight = Math.max(maxHeight, heights[i]);
  }
  t.true(boxPixels > 100);
  t.true(Math.abs(maxHeight - 300) < 1);
});

test('noise and dropout are reproducible from the seed', (t) => {
  const scene: Scene = { intrinsics: k, cameraHeightMm: 800, tiltDegs: 20, boxes: [], noiseMm: 3, dropout: 0.1, seed: 9 };
  t.deepEqual(renderScene(scene).map.depth, renderScene(scene).map.depth);
  t.notDeepEqual(renderScene(scene).map.depth, renderScene({ ...scene, seed: 10 }).map.depth);
  const clean = renderScene({ ...scene, noiseMm: 0, dropout: 0 }).map.depth;
  const zeros = renderScene(scene).map.depth.filter((d, i) => d === 0 && clean[i] !== 0).length;
  const floor = clean.filter((d) => d !== 0).length;
  t.true(zeros > floor * 0.05 && zeros < floor * 0.15, `${zeros} of ${floor}`);
});
