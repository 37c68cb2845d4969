// Ground plane by RANSAC, refined by least squares, accepted only within a tolerance of the ideal
// ground normal (0,-1,0).
//
// On an organized cloud each hypothesis takes its three points from one image neighbourhood, which makes
// three points of the same surface likely even when the floor fills a small part of the frame. Hypotheses
// are scored on a fixed random sample of the valid points; the winner is refined and counted on all points.
import { SeededRandom } from '../../../camera/fake/random.js';
import { fitPlane, orientUp, type Plane } from './plane.js';
import { Scratch } from './scratch.js';

export interface GroundPlaneParams {
  maxDistFromPlaneMm: number;
  groundAngleToleranceDegs: number;
}

export interface GroundPlaneFit {
  plane: Plane;
  /** Valid points within maxDistFromPlaneMm of the plane. */
  inliers: number;
}

const ITERATIONS = 200;
const SAMPLE_SIZE = 2000;
const NEIGHBOURHOOD_PX = 48;
const REFINEMENTS = 3;
const ROUNDS = 4;
const MIN_SAMPLE_LEFT = 30;
const MIN_FIT_BAND_MM = 2;
const FIT_SCALE_MM = 25;
/** A hypothesis is dropped when its score on the first eighth is below this share of the best's whole-sample eighth. */
const PREEMPT_FRACTION = 0.125 * 0.6;

export function fitGroundPlane(
  positions: Float32Array,
  width: number,
  height: number,
  valid: Int32Array,
  validCount: number,
  params: GroundPlaneParams,
  random = new SeededRandom(0x5eed),
  scratch = new Scratch(),
): GroundPlaneFit | undefined {
  if (validCount < 3) return undefined;
  const band = params.maxDistFromPlaneMm;
  // Hypotheses are scored at a sensor-noise scale, not at the (often much wider) removal band: with a
  // 100 mm band a plane cutting diagonally through a table and the floor would outscore either of them.
  const invBand = 1 / Math.min(band, FIT_SCALE_MM);
  const minUp = Math.cos((params.groundAngleToleranceDegs * Math.PI) / 180) - 1e-12;

  const sampleCount = Math.min(SAMPLE_SIZE, validCount);
  const sample = new Float64Array(sampleCount * 3);
  for (let k = 0; k < sampleCount; k++) {
    const o = valid[validCount <= SAMPLE_SIZE ? k : random.int(validCount)] * 3;
    sample[k * 3] = positions[o];
    sample[k * 3 + 1] = positions[o + 1];
    sample[k * 3 + 2] = positions[o + 2];
  }

  const organized = height > 1;
  const pick = (anchor: number): number => {
    if (!organized) return valid[random.int(validCount)];
    const u0 = anchor % width;
    const v0 = (anchor - u0) / width;
    for (let attempt = 0; attempt < 8; attempt++) {
      const u = u0 + random.int(2 * NEIGHBOURHOOD_PX + 1) - NEIGHBOURHOOD_PX;
      const v = v0 + random.int(2 * NEIGHBOURHOOD_PX + 1) - NEIGHBOURHOOD_PX;
      if (u < 0 || v < 0 || u >= width || v >= height) continue;
      const i = v * width + u;
      if (positions[i * 3 + 2] === positions[i * 3 + 2]) return i;
    }
    return -1;
  };

  // Sequential RANSAC: find the scene's dominant plane, then the next one among the remaining points, and
  // so on. The ground is the first of them whose least-squares normal lies within the tolerance. Testing
  // the angle on fitted planes rather than on hypotheses keeps a plane from "slicing" a too-steep floor.
  const alive = new Uint8Array(sampleCount).fill(1);
  const sampleIndex = Int32Array.from({ length: sampleCount }, (_, k) => k);
  for (let round = 0; round < ROUNDS; round++) {
    const best = bestHypothesis(
      sample,
      alive,
      invBand,
      () => {
        const a = valid[random.int(validCount)];
        return [a, pick(a), pick(a)];
      },
      positions,
    );
    if (!best) return undefined;
    // The tilt test needs only the sample; the full cloud refines the plane that passes it.
    const rough = refine(sample, sampleIndex, sampleCount, sample, alive, best, band, scratch.int32('sample-inliers', sampleCount));
    if (-rough.ny >= minUp) {
      const plane = refine(positions, valid, validCount, sample, alive, rough, band, scratch.int32('inliers', validCount));
      const accepted = -plane.ny >= minUp ? plane : rough;
      // A plane can pass the angle test while the surface it removes does not: a 17 deg plane through a
      // 33 deg table holds the whole table within a 100 mm band. What would be removed must itself be
      // within the tolerance: the median tilt of its points' own surface normals decides.
      const surface = organized ? surfaceTiltDegs(positions, width, height, valid, validCount, accepted, band, random) : undefined;
      if (surface === undefined || surface <= params.groundAngleToleranceDegs) {
        return { plane: accepted, inliers: countInliers(positions, valid, validCount, accepted, band) };
      }
    }
    const plane = rough;
    let left = 0;
    for (let k = 0; k < sampleCount; k++) {
      if (!alive[k]) continue;
      const h = plane.nx * sample[k * 3] + plane.ny * sample[k * 3 + 1] + plane.nz * sample[k * 3 + 2] + plane.d;
      if (h <= band && h >= -band) alive[k] = 0;
      else left++;
    }
    if (left < MIN_SAMPLE_LEFT) return undefined;
  }
  return undefined;
}

const SURFACE_SAMPLES = 2000;
/** Pixel offset of the neighbours that give a point's surface normal: wide enough to average out depth noise. */
const SURFACE_STEP_PX = 8;

/**
 * Median tilt from the ideal ground normal, in degrees, of the local surface at (a sample of) the points
 * within `band` of `plane`. Each point's normal is the cross product of the vectors to its neighbours
 * SURFACE_STEP_PX to the right and below; points without both neighbours are skipped. Undefined when
 * too few points have neighbours to judge.
 */
function surfaceTiltDegs(
  p: Float32Array,
  width: number,
  height: number,
  valid: Int32Array,
  validCount: number,
  plane: Plane,
  band: number,
  random: SeededRandom,
): number | undefined {
  const tilts: number[] = [];
  const { nx, ny, nz, d } = plane;
  for (let attempt = 0; attempt < SURFACE_SAMPLES * 4 && tilts.length < SURFACE_SAMPLES; attempt++) {
    const i = valid[random.int(validCount)];
    const o = i * 3;
    const h = nx * p[o] + ny * p[o + 1] + nz * p[o + 2] + d;
    if (h > band || h < -band) continue;
    const u = i % width;
    const v = (i - u) / width;
    if (u + SURFACE_STEP_PX >= width || v + SURFACE_STEP_PX >= height) continue;
    const r = (i + SURFACE_STEP_PX) * 3;
    const b = (i + SURFACE_STEP_PX * width) * 3;
    // NaN marks a missing point: NaN !== NaN.
    if (p[r + 2] !== p[r + 2] || p[b + 2] !== p[b + 2]) continue;
    const ux = p[r] - p[o],
      uy = p[r + 1] - p[o + 1],
      uz = p[r + 2] - p[o + 2];
    const wx = p[b] - p[o],
      wy = p[b + 1] - p[o + 1],
      wz = p[b + 2] - p[o + 2];
    const cx = uy * wz - uz * wy,
      cy = uz * wx - ux * wz,
      cz = ux * wy - uy * wx;
    const len = Math.hypot(cx, cy, cz);
    if (!(len > 1e-9)) continue;
    tilts.push((Math.acos(Math.min(1, Math.abs(cy) / len)) * 180) / Math.PI);
  }
  if (tilts.length < MIN_SAMPLE_LEFT) return undefined;
  tilts.sort((a, b) => a - b);
  return tilts[tilts.length >> 1];
}

/** The hypothesis with the best MSAC score on the live sample points. */
function bestHypothesis(sample: Float64Array, alive: Uint8Array, invBand: number, triple: () => number[], positions: Float32Array): Plane | undefined {
  let best: Plane | undefined;
  let bestScore = 0;
  for (let it = 0; it < ITERATIONS; it++) {
    const [a, b, c] = triple();
    if (b < 0 || c < 0 || a === b || b === c || a === c) continue;
    const plane = planeThrough(positions, a, b, c);
    if (!plane) continue;
    // MSAC score: an inlier counts less the farther it is, so a plane riding on top of the band (which
    // would hold the same floor points plus the feet of every object) loses to the centred one.
    // Preemptive: the sample is in random order, so a hypothesis far behind the best after the first
    // eighth of it is dropped without scoring the rest.
    let score = 0;
    const { nx, ny, nz, d } = plane;
    const checkpoint = alive.length >> 3;
    let q = 0;
    for (let k = 0; q < alive.length; k += 3, q++) {
      if (q === checkpoint && score < bestScore * PREEMPT_FRACTION) break;
      if (!alive[q]) continue;
      const h = (nx * sample[k] + ny * sample[k + 1] + nz * sample[k + 2] + d) * invBand;
      if (h <= 1 && h >= -1) score += 1 - h * h;
    }
    if (q < alive.length) continue;
    if (score > bestScore) {
      bestScore = score;
      best = plane;
    }
  }
  return best;
}

/**
 * Least squares on the points near the plane: the fitting band shrinks to three robust standard
 * deviations of the residuals so object feet inside max_dist_from_plane_mm do not lift the plane.
 */
function refine(
  positions: Float32Array | Float64Array,
  valid: Int32Array,
  validCount: number,
  sample: Float64Array,
  alive: Uint8Array,
  start: Plane,
  band: number,
  inlierIdx: Int32Array,
): Plane {
  let plane = start;
  for (let r = 0; r < REFINEMENTS; r++) {
    const fitBand = Math.min(band, Math.max(MIN_FIT_BAND_MM, 3 * 1.4826 * medianAbsResidual(sample, alive, plane, band)));
    const count = collectInliers(positions, valid, validCount, plane, fitBand, inlierIdx);
    const refit = fitPlane(positions, inlierIdx, count);
    if (!refit) break;
    plane = refit;
  }
  return plane;
}

function planeThrough(p: Float32Array, a: number, b: number, c: number): Plane | undefined {
  const ax = p[a * 3],
    ay = p[a * 3 + 1],
    az = p[a * 3 + 2];
  const ux = p[b * 3] - ax,
    uy = p[b * 3 + 1] - ay,
    uz = p[b * 3 + 2] - az;
  const vx = p[c * 3] - ax,
    vy = p[c * 3 + 1] - ay,
    vz = p[c * 3 + 2] - az;
  const nx = uy * vz - uz * vy,
    ny = uz * vx - ux * vz,
    nz = ux * vy - uy * vx;
  const len = Math.hypot(nx, ny, nz);
  if (!(len > 1e-9)) return undefined;
  return orientUp(nx / len, ny / len, nz / len, -(nx * ax + ny * ay + nz * az) / len);
}

function collectInliers(p: Float32Array | Float64Array, valid: Int32Array, validCount: number, plane: Plane, band: number, out: Int32Array): number {
  const { nx, ny, nz, d } = plane;
  let n = 0;
  for (let k = 0; k < validCount; k++) {
    const i = valid[k];
    const o = i * 3;
    const h = nx * p[o] + ny * p[o + 1] + nz * p[o + 2] + d;
    if (h <= band && h >= -band) out[n++] = i;
  }
  return n;
}

function countInliers(p: Float32Array, valid: Int32Array, validCount: number, plane: Plane, band: number): number {
  const { nx, ny, nz, d } = plane;
  let n = 0;
  for (let k = 0; k < validCount; k++) {
    const o = valid[k] * 3;
    const h = nx * p[o] + ny * p[o + 1] + nz * p[o + 2] + d;
    if (h <= band && h >= -band) n++;
  }
  return n;
}

/** Median |height| of the sampled points inside the band. */
function medianAbsResidual(sample: Float64Array, alive: Uint8Array, plane: Plane, band: number): number {
  const residuals: number[] = [];
  for (let k = 0; k < sample.length; k += 3) {
    if (!alive[k / 3]) continue;
    const h = Math.abs(plane.nx * sample[k] + plane.ny * sample[k + 1] + plane.nz * sample[k + 2] + plane.d);
    if (h <= band) residuals.push(h);
  }
  if (residuals.length === 0) return band;
  residuals.sort((a, b) => a - b);
  return residuals[residuals.length >> 1];
}
