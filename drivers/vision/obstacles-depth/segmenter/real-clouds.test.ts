// The segmenter on the three real Kinect-class clouds of ../shared/data/pcd, with the outcomes stated.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { readPcd } from '../../../../plugins/formats/pcd/pcd-reader.js';
import { parseObstaclesDepthAttributes } from '../attributes.js';
import { tiltFromIdealDegs } from './plane.js';
import { Segmenter } from './segmenter.js';
import { pcdDataPath } from '../../../testing/pcd-data.js';

const load = (file: string) => readPcd(readFileSync(pcdDataPath(file)));
const run = (file: string, attrs: Record<string, unknown> = {}) => {
  const { camera_name: _, ...params } = parseObstaclesDepthAttributes({ camera_name: 'kinect', ...attrs });
  return new Segmenter(params).segment(load(file));
};
const near = (a: number[], b: number[], tol: number) => a.every((v, i) => Math.abs(v - b[i]) <= tol);

test('mug scene, tolerance 50 and a 20 mm band: the table (~33 deg) is the ground and the mug is the one object', (t) => {
  const r = run('table_scene_mug_stereo_textured.pcd', { ground_angle_tolerance_degs: 50, max_dist_from_plane_mm: 20, min_points_in_segment: 300 });
  t.true(Math.abs(tiltFromIdealDegs(r.ground!.plane) - 33) < 2);
  t.true(r.ground!.inliers > 100_000);
  t.is(r.segments.length, 1);
  const mug = r.segments[0];
  t.true(mug.cloud.width > 10_000);
  // A mug about 13 x 11 x 9 cm standing 0.76 m in front of the camera.
  t.true(near(mug.center, [73, 62, 758], 30), `center ${mug.center.map(Math.round)}`);
  t.true(near(mug.dims, [133, 109, 92], 30), `dims ${mug.dims.map(Math.round)}`);
});

test('mug scene, default 100 mm band: the mug (about 11 cm tall) is almost all inside the band, so no sizable object', (t) => {
  const r = run('table_scene_mug_stereo_textured.pcd', { ground_angle_tolerance_degs: 50 });
  t.true(Math.abs(tiltFromIdealDegs(r.ground!.plane) - 33) < 2);
  t.true(
    r.segments.every((s) => s.cloud.width < 500),
    `${r.segments.map((s) => s.cloud.width)}`,
  );
});

test('mug scene, defaults: the 33 deg table is steeper than the 30 deg tolerance, so there is no ground at all', (t) => {
  const r = run('table_scene_mug_stereo_textured.pcd');
  // Before: a 16.7 deg plane whose 100 mm band held the whole table (179,542 points) was taken as ground.
  t.is(r.ground, undefined);
  t.false(r.segments.some((s) => near(s.center, [73, 62, 758], 40) && near(s.dims, [133, 109, 92], 40)));
});

test('milk scene, tolerance 50 and a 20 mm band: the table (~35 deg) is removed and the three items on it are the three largest objects', (t) => {
  const r = run('milk_cartoon_all_small_clorox.pcd', { ground_angle_tolerance_degs: 50, max_dist_from_plane_mm: 20, min_points_in_segment: 5000 });
  t.true(Math.abs(tiltFromIdealDegs(r.ground!.plane) - 35) < 2);
  t.is(r.segments.length, 3);
  const expected = [
    [180, -89, 710],
    [-63, -144, 791],
    [-218, -27, 650],
  ];
  for (const center of expected) t.is(r.segments.filter((s) => near(s.center, center, 40)).length, 1, `object at ${center}`);
  t.true(r.segments.every((s) => s.dims.every((d) => d > 80 && d < 300)));
});

test('milk scene, defaults: the 35 deg table is outside the tolerance, nothing is removed, and the connected scene is one object', (t) => {
  const r = run('milk_cartoon_all_small_clorox.pcd');
  t.is(r.ground, undefined);
  t.is(r.segments.length, 1);
  t.true(r.segments[0].cloud.width > 240_000);
});

test('office scene: the largest plane is a wall, never taken as ground, at the default or a 50 deg tolerance', (t) => {
  for (const attrs of [{}, { ground_angle_tolerance_degs: 50 }]) {
    const r = run('office1.pcd', attrs);
    t.is(r.ground, undefined);
    // The wall and what is connected to it stay one large object.
    t.true(r.segments[0].cloud.width > 200_000);
    t.true(r.segments.length >= 3);
  }
});
