import test from 'ava';
import { intrinsicsFromFov } from '../../../camera/depth/intrinsics.js';
import { depthToPointCloud } from '../../../camera/depth/projection.js';
import { SeededRandom } from '../../../camera/fake/random.js';
import { cameraFrame, renderScene, type Scene, type SceneBox } from '../../../camera/fake/scene.js';
import type { PointCloud } from '../../../camera/pointcloud/point-cloud.js';
import { parseObstaclesDepthAttributes } from '../attributes.js';
import { tiltFromIdealDegs } from './plane.js';
import { Segmenter } from './segmenter.js';
import { centroid, syntheticCase } from './synthetic-scenes.js';

const segmenter = (attrs: Record<string, unknown> = {}) => {
  const { camera_name: _, ...params } = parseObstaclesDepthAttributes({ camera_name: 'cam', ...attrs });
  return new Segmenter(params);
};
const dist = (a: number[], b: number[]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

const k = intrinsicsFromFov(640, 480, 60);
const sceneCloud = (boxes: SceneBox[], extra: Partial<Scene> = {}) =>
  depthToPointCloud(renderScene({ intrinsics: k, cameraHeightMm: 900, tiltDegs: 20, boxes, noiseMm: 1, seed: 5, ...extra }).map, k);

for (let boxes = 1; boxes <= 6; boxes++) {
  test(`synthetic scenes with ${boxes} box(es), defaults: every object found once, centroid within 40 mm, nothing extra`, (t) => {
    const seg = segmenter();
    for (let s = 0; s < 5; s++) {
      const seed = boxes * 100 + s;
      const c = syntheticCase(seed, boxes);
      const { segments, ground } = seg.segment(c.cloud);
      const where = `seed ${seed}, tilt ${c.scene.tiltDegs.toFixed(1)}, roll ${c.scene.rollDegs!.toFixed(1)}`;
      t.truthy(ground, where);
      // The floor's true angle from (0,-1,0) combines pitch and roll.
      const trueTilt = (Math.acos(-cameraFrame(c.scene).down[1]) * 180) / Math.PI;
      t.true(Math.abs(tiltFromIdealDegs(ground!.plane) - trueTilt) < 0.5, where);
      t.is(segments.length, boxes, where);
      const found = segments.map((x) => centroid(x.cloud));
      for (const [b, truth] of c.truth.entries()) {
        const near = found.filter((f) => dist(f, truth.centroid) <= 40);
        t.is(near.length, 1, `${where}: box ${b} at ${truth.centroid.map(Math.round)} matched ${near.length} objects`);
      }
    }
  });
}

test('each object carries its points (mm) and the axis-aligned box around exactly those points', (t) => {
  const c = syntheticCase(42, 3);
  for (const s of segmenter().segment(c.cloud).segments) {
    const p = s.cloud.positions;
    t.is(s.cloud.height, 1);
    t.is(p.length, s.cloud.width * 3);
    for (let axis = 0; axis < 3; axis++) {
      let lo = Infinity,
        hi = -Infinity;
      for (let i = axis; i < p.length; i += 3) {
        lo = Math.min(lo, p[i]);
        hi = Math.max(hi, p[i]);
      }
      t.is(s.center[axis], (lo + hi) / 2);
      t.is(s.dims[axis], hi - lo);
    }
    t.true(s.dims.every((d) => d > 50 && d < 1000));
  }
});

test('clustering_radius: a gap of a few pixels splits two boxes at radius 1 and is bridged at radius 8', (t) => {
  // 20 mm apart at 2 m is ~5 pixels of removed floor between them.
  const cloud = sceneCloud([
    { x: -160, z: 2000, width: 300, height: 300, depth: 300 },
    { x: 160, z: 2000, width: 300, height: 300, depth: 300 },
  ]);
  t.is(segmenter().segment(cloud).segments.length, 2);
  t.is(segmenter({ clustering_radius: 8 }).segment(cloud).segments.length, 1);
});

test('clustering_strictness: a box 60 mm behind another merges with it at 5 and splits at 40', (t) => {
  const cloud = sceneCloud([
    { x: 0, z: 1500, width: 300, height: 250, depth: 200 },
    { x: 0, z: 1760, width: 400, height: 600, depth: 200 },
  ]);
  t.is(segmenter().segment(cloud).segments.length, 1);
  t.is(segmenter({ clustering_strictness: 40 }).segment(cloud).segments.length, 2);
});

test('monotone by construction: more radius never adds clusters, more strictness never removes them', (t) => {
  const c = syntheticCase(7, 6).cloud;
  const count = (attrs: Record<string, unknown>) => segmenter({ min_points_in_segment: 1, ...attrs }).segment(c).segments.length;
  const byRadius = [1, 2, 4].map((r) => count({ clustering_radius: r }));
  const byStrictness = [1, 5, 30, 70].map((s) => count({ clustering_strictness: s }));
  for (let i = 1; i < byRadius.length; i++) t.true(byRadius[i] <= byRadius[i - 1], `radius: ${byRadius}`);
  for (let i = 1; i < byStrictness.length; i++) t.true(byStrictness[i] >= byStrictness[i - 1], `strictness: ${byStrictness}`);
  t.true(byStrictness[3] > byStrictness[1] * 10, `strictness 70 shatters surfaces: ${byStrictness}`);
});

test('min_points_in_plane: a plane with fewer points is not removed, so the floor becomes part of the objects', (t) => {
  const cloud = sceneCloud([{ x: 0, z: 2000, width: 300, height: 300, depth: 300 }]);
  const removed = segmenter().segment(cloud);
  t.truthy(removed.ground);
  const kept = segmenter({ min_points_in_plane: removed.ground!.inliers + 1 }).segment(cloud);
  t.is(kept.ground, undefined);
  t.is(kept.candidate?.inliers, removed.ground!.inliers);
  const total = kept.segments.reduce((n, s) => n + s.cloud.width, 0);
  t.true(total > removed.ground!.inliers, 'the floor points are in the output');
});

test('ground_angle_tolerance_degs: a floor tilted 36 degrees is no ground at 30 but is at 40', (t) => {
  const cloud = sceneCloud([{ x: 0, z: 1800, width: 300, height: 300, depth: 300 }], { tiltDegs: 36 });
  const strict = segmenter().segment(cloud);
  t.is(strict.ground, undefined);
  t.is(strict.candidate, undefined);
  const loose = segmenter({ ground_angle_tolerance_degs: 40 }).segment(cloud);
  t.true(Math.abs(tiltFromIdealDegs(loose.ground!.plane) - 36) < 1);
  t.is(loose.segments.length, 1);
});

test('max_dist_from_plane_mm: an 80 mm box is part of the ground band at 100 but an object at 50', (t) => {
  const cloud = sceneCloud([{ x: 0, z: 1800, width: 300, height: 80, depth: 300 }]);
  t.is(segmenter().segment(cloud).segments.length, 0);
  const found = segmenter({ max_dist_from_plane_mm: 50 }).segment(cloud).segments;
  t.is(found.length, 1);
});

test('min_points_in_segment drops smaller objects', (t) => {
  const cloud = sceneCloud([
    { x: -300, z: 2000, width: 400, height: 400, depth: 300 },
    { x: 300, z: 2000, width: 150, height: 160, depth: 150 },
  ]);
  const both = segmenter().segment(cloud).segments;
  t.is(both.length, 2);
  const small = Math.min(...both.map((s) => s.cloud.width));
  const one = segmenter({ min_points_in_segment: small + 1 }).segment(cloud).segments;
  t.is(one.length, 1);
  t.true(one[0].cloud.width > small);
});

test('an unorganized cloud (height 1, points shuffled) gets the same objects', (t) => {
  const c = syntheticCase(11, 4);
  const random = new SeededRandom(4);
  const n = c.cloud.width * c.cloud.height;
  const order = Uint32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const positions = new Float32Array(n * 3);
  order.forEach((src, dst) => positions.set(c.cloud.positions.subarray(src * 3, src * 3 + 3), dst * 3));
  const flat: PointCloud = { width: n, height: 1, positions };
  const { segments } = segmenter().segment(flat);
  t.is(segments.length, 4);
  for (const truth of c.truth) t.true(segments.some((s) => dist(centroid(s.cloud), truth.centroid) <= 40));
});

test('an empty or all-NaN cloud gives no objects and no plane', (t) => {
  const r = segmenter().segment({ width: 4, height: 2, positions: new Float32Array(24).fill(NaN) });
  t.deepEqual(r.segments, []);
  t.is(r.ground, undefined);
  t.deepEqual(segmenter().segment({ width: 0, height: 1, positions: new Float32Array(0) }).segments, []);
});
