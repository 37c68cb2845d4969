// Test scene generator: a tilted, rolled camera over a floor with 1 to 6 boxes that do not occlude one
// another (their image rectangles are disjoint), plus the ground truth a perfect segmenter would return:
// for each box, the centroid of its visible surface standing higher than the plane band.
import { intrinsicsFromFov, type Intrinsics } from '../../../camera/depth/intrinsics.js';
import { depthToPointCloud } from '../../../camera/depth/projection.js';
import { SeededRandom } from '../../../camera/fake/random.js';
import { boxCorners, cameraFrame, HIT_BOX0, renderScene, worldToCamera, type Scene, type SceneBox } from '../../../camera/fake/scene.js';
import type { PointCloud } from '../../../camera/pointcloud/point-cloud.js';

export interface TruthObject {
  centroid: [number, number, number];
  visiblePoints: number;
}

export interface SyntheticCase {
  scene: Scene;
  cloud: PointCloud;
  truth: TruthObject[];
}

function imageRect(scene: Scene, box: SceneBox, k: Intrinsics): [number, number, number, number] | undefined {
  const frame = cameraFrame(scene);
  let u0 = Infinity,
    v0 = Infinity,
    u1 = -Infinity,
    v1 = -Infinity;
  for (const corner of boxCorners(box)) {
    const [x, y, z] = worldToCamera(frame, corner);
    if (z <= 100) return undefined;
    const u = k.ppx + (k.fx * x) / z;
    const v = k.ppy + (k.fy * y) / z;
    u0 = Math.min(u0, u);
    u1 = Math.max(u1, u);
    v0 = Math.min(v0, v);
    v1 = Math.max(v1, v);
  }
  if (u0 < 2 || v0 < 2 || u1 > k.width - 3 || v1 > k.height - 3) return undefined; // fully in view
  return [u0, v0, u1, v1];
}

const disjoint = (a: number[], b: number[], margin: number) => a[2] + margin < b[0] || b[2] + margin < a[0] || a[3] + margin < b[1] || b[3] + margin < a[1];

/**
 * True when a vertical face of the box is seen within 6 degrees of edge-on from the camera (at the origin
 * of the floor plan): such a face images as 1-pixel columns whose 3D spacing is unbounded, which no local
 * grid criterion can link, so the scenes with "well-separated objects" leave them out.
 */
function edgeOn(box: SceneBox): boolean {
  const yaw = ((box.yawDegs ?? 0) * Math.PI) / 180;
  const view = [box.x, box.z];
  const len = Math.hypot(view[0], view[1]);
  for (const [nx, nz] of [
    [Math.cos(yaw), -Math.sin(yaw)],
    [Math.sin(yaw), Math.cos(yaw)],
  ]) {
    if (Math.abs((nx * view[0] + nz * view[1]) / len) < Math.sin((6 * Math.PI) / 180)) return true;
  }
  return false;
}

export function syntheticCase(seed: number, boxCount: number, opts: { bandMm?: number; noiseMm?: number; maxTiltDegs?: number } = {}): SyntheticCase {
  const random = new SeededRandom(seed);
  const intrinsics = intrinsicsFromFov(640, 480, 58 + random.next() * 10);
  const band = opts.bandMm ?? 100;
  const base: Scene = {
    intrinsics,
    cameraHeightMm: 700 + random.next() * 700,
    tiltDegs: 8 + random.next() * ((opts.maxTiltDegs ?? 25) - 8),
    rollDegs: -6 + random.next() * 12,
    boxes: [],
    noiseMm: opts.noiseMm ?? 1 + random.next() * 2,
    dropout: random.next() * 0.02,
    maxDepthMm: 6000,
    seed,
  };
  const rects: number[][] = [];
  for (let attempt = 0; base.boxes.length < boxCount && attempt < 5000; attempt++) {
    const z = 1000 + random.next() * 2800;
    const box: SceneBox = {
      x: (random.next() - 0.5) * z * 0.9,
      z,
      width: 150 + random.next() * 300,
      depth: 150 + random.next() * 300,
      height: band + 120 + random.next() * 350,
      yawDegs: random.next() * 90,
    };
    const rect = imageRect(base, box, intrinsics);
    if (edgeOn(box)) continue;
    if (!rect || rects.some((r) => !disjoint(r, rect, 4))) continue;
    rects.push(rect);
    base.boxes.push(box);
  }
  if (base.boxes.length < boxCount) throw new Error(`seed ${seed}: could not place ${boxCount} boxes`);
  const noisy = renderScene(base);
  const clean = renderScene({ ...base, noiseMm: 0, dropout: 0 });
  const cleanCloud = depthToPointCloud(clean.map, intrinsics);
  const sums = base.boxes.map(() => [0, 0, 0, 0]);
  for (let i = 0; i < clean.labels.length; i++) {
    const b = clean.labels[i] - HIT_BOX0;
    if (b < 0 || !(clean.heights[i] > band)) continue;
    for (let c = 0; c < 3; c++) sums[b][c] += cleanCloud.positions[i * 3 + c];
    sums[b][3]++;
  }
  const truth = sums.map((s) => ({ centroid: [s[0] / s[3], s[1] / s[3], s[2] / s[3]] as [number, number, number], visiblePoints: s[3] }));
  return { scene: base, cloud: depthToPointCloud(noisy.map, intrinsics), truth };
}

export function centroid(cloud: PointCloud): [number, number, number] {
  const p = cloud.positions;
  const s = [0, 0, 0];
  for (let i = 0; i < p.length; i += 3) for (let c = 0; c < 3; c++) s[c] += p[i + c];
  const n = p.length / 3;
  return [s[0] / n, s[1] / n, s[2] / n];
}
