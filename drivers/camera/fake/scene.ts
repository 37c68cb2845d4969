// A synthetic depth scene: a camera above a flat floor, pitched down (and optionally rolled), looking at
// boxes standing on the floor. Rendering casts one ray per pixel, so the result is an exact organized
// depth map plus, per pixel, what was hit and how high above the floor it is (the ground truth tests use).
//
// World frame: X right, Y up, Z forward along the floor; the floor is Y = 0; the camera sits at
// (0, cameraHeightMm, 0). Camera frame (DESIGN): x right, y down, z forward. All lengths millimetres.
import type { Intrinsics } from '../depth/intrinsics.js';
import type { DepthMap } from '../depth/projection.js';
import { SeededRandom } from './random.js';

export interface SceneBox {
  /** Centre of the box's footprint on the floor, world X and Z. */
  x: number;
  z: number;
  /** Extent along X, Y (height) and Z before yaw. */
  width: number;
  height: number;
  depth: number;
  /** Rotation about the world's vertical axis. */
  yawDegs?: number;
}

export interface Scene {
  intrinsics: Intrinsics;
  cameraHeightMm: number;
  /** Pitch down: the floor normal seen by the camera is this many degrees from the ideal (0,-1,0). */
  tiltDegs: number;
  rollDegs?: number;
  boxes: SceneBox[];
  /** Standard deviation of Gaussian depth noise at 1 m; grows with the square of depth like structured light. */
  noiseMm?: number;
  /** Fraction of pixels randomly without a reading (0..1). */
  dropout?: number;
  /** Readings beyond this are reported as no reading (0). */
  maxDepthMm?: number;
  seed?: number;
}

/** What a pixel saw. */
export const HIT_NOTHING = 0;
export const HIT_FLOOR = 1;
/** Box i is labelled HIT_BOX0 + i. */
export const HIT_BOX0 = 2;

export interface RenderedScene {
  /** The depth map with the sensor model (noise, dropout, range, millimetre quantisation) applied. */
  map: DepthMap;
  /** Noise-free depth (camera-frame z) of every hit, 0 where nothing was hit. */
  trueDepth: Float32Array;
  labels: Uint8Array;
  /** Height above the floor of the noise-free hit point (NaN where nothing was hit). */
  heights: Float32Array;
}

interface Frame {
  origin: [number, number, number];
  right: [number, number, number];
  down: [number, number, number];
  forward: [number, number, number];
}

export function cameraFrame(scene: Scene): Frame {
  const t = (scene.tiltDegs * Math.PI) / 180;
  const r = ((scene.rollDegs ?? 0) * Math.PI) / 180;
  const forward: [number, number, number] = [0, -Math.sin(t), Math.cos(t)];
  const down0: [number, number, number] = [0, -Math.cos(t), -Math.sin(t)];
  const right0: [number, number, number] = [1, 0, 0];
  const right = right0.map((c, i) => c * Math.cos(r) + down0[i] * Math.sin(r)) as Frame['right'];
  const down = right0.map((c, i) => -c * Math.sin(r) + down0[i] * Math.cos(r)) as Frame['down'];
  return { origin: [0, scene.cameraHeightMm, 0], right, down, forward };
}

/** World coordinates of a camera-frame point. */
export function cameraToWorld(frame: Frame, p: [number, number, number]): [number, number, number] {
  return [0, 1, 2].map((i) => frame.origin[i] + p[0] * frame.right[i] + p[1] * frame.down[i] + p[2] * frame.forward[i]) as [number, number, number];
}

/** Camera-frame coordinates of a world point. */
export function worldToCamera(frame: Frame, w: [number, number, number]): [number, number, number] {
  const d = [w[0] - frame.origin[0], w[1] - frame.origin[1], w[2] - frame.origin[2]];
  const dot = (a: number[]) => a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
  return [dot(frame.right), dot(frame.down), dot(frame.forward)];
}

/** The 8 corners of a box in world coordinates. */
export function boxCorners(box: SceneBox): [number, number, number][] {
  const yaw = ((box.yawDegs ?? 0) * Math.PI) / 180;
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const corners: [number, number, number][] = [];
  for (const lx of [-box.width / 2, box.width / 2])
    for (const ly of [0, box.height]) for (const lz of [-box.depth / 2, box.depth / 2]) corners.push([box.x + c * lx + s * lz, ly, box.z - s * lx + c * lz]);
  return corners;
}

/** Distance along the ray to the box, or Infinity. Slab test in the box's own frame. */
function hitBox(box: SceneBox, cos: number, sin: number, o: number[], d: number[]): number {
  // Local = Ry(-yaw) (world - footprint centre); matches boxCorners' rotation.
  const ox = o[0] - box.x;
  const oz = o[2] - box.z;
  const lo = [cos * ox - sin * oz, o[1] - box.height / 2, sin * ox + cos * oz];
  const ld = [cos * d[0] - sin * d[2], d[1], sin * d[0] + cos * d[2]];
  const half = [box.width / 2, box.height / 2, box.depth / 2];
  let near = -Infinity;
  let far = Infinity;
  for (let k = 0; k < 3; k++) {
    if (Math.abs(ld[k]) < 1e-12) {
      if (Math.abs(lo[k]) > half[k]) return Infinity;
      continue;
    }
    let t1 = (-half[k] - lo[k]) / ld[k];
    let t2 = (half[k] - lo[k]) / ld[k];
    if (t1 > t2) [t1, t2] = [t2, t1];
    if (t1 > near) near = t1;
    if (t2 < far) far = t2;
    if (near > far) return Infinity;
  }
  return near > 0 ? near : Infinity;
}

export function renderScene(scene: Scene): RenderedScene {
  const k = scene.intrinsics;
  const { width, height } = k;
  const frame = cameraFrame(scene);
  const trueDepth = new Float32Array(width * height);
  const labels = new Uint8Array(width * height);
  const heights = new Float32Array(width * height).fill(NaN);
  const trig = scene.boxes.map((b) => {
    const yaw = ((b.yawDegs ?? 0) * Math.PI) / 180;
    return [Math.cos(yaw), Math.sin(yaw)];
  });
  const o = frame.origin;
  const dir = [0, 0, 0];
  for (let v = 0, i = 0; v < height; v++) {
    const b = (v - k.ppy) / k.fy;
    for (let u = 0; u < width; u++, i++) {
      const a = (u - k.ppx) / k.fx;
      // Ray with unit forward component: the hit distance t is the camera-frame z.
      for (let c = 0; c < 3; c++) dir[c] = a * frame.right[c] + b * frame.down[c] + frame.forward[c];
      let best = dir[1] < 0 ? -o[1] / dir[1] : Infinity;
      let label = best < Infinity ? HIT_FLOOR : HIT_NOTHING;
      for (let j = 0; j < scene.boxes.length; j++) {
        const t = hitBox(scene.boxes[j], trig[j][0], trig[j][1], o, dir);
        if (t < best) {
          best = t;
          label = HIT_BOX0 + j;
        }
      }
      if (label === HIT_NOTHING) continue;
      labels[i] = label;
      heights[i] = o[1] + best * dir[1];
      trueDepth[i] = best;
    }
  }
  const map = applySensorModel(trueDepth, width, height, scene, new SeededRandom(scene.seed ?? 1));
  for (let i = 0; i < labels.length; i++) {
    if (map.depth[i] !== 0) continue;
    labels[i] = HIT_NOTHING;
    heights[i] = NaN;
  }
  return { map, trueDepth, labels, heights };
}

/**
 * What the sensor reports for noise-free depths: Gaussian noise whose deviation grows with the square of
 * depth (like structured light), random dropouts, nothing beyond the range, whole millimetres.
 */
export function applySensorModel(
  trueDepth: Float32Array,
  width: number,
  height: number,
  scene: Pick<Scene, 'noiseMm' | 'dropout' | 'maxDepthMm'>,
  random: SeededRandom,
): DepthMap {
  const noise = scene.noiseMm ?? 0;
  const dropout = scene.dropout ?? 0;
  const maxDepth = Math.min(scene.maxDepthMm ?? 10000, 65535);
  const depth = new Uint16Array(width * height);
  for (let i = 0; i < depth.length; i++) {
    const t = trueDepth[i];
    if (t === 0 || t > maxDepth) continue;
    if (dropout > 0 && random.next() < dropout) continue;
    const sigma = noise * (t / 1000) * (t / 1000);
    const z = Math.round(t + (sigma > 0 ? sigma * random.gaussian() : 0));
    depth[i] = Math.min(Math.max(z, 1), 65535);
  }
  return { width, height, depth };
}
