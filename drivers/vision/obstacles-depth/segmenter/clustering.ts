// Connected-component clustering on the image grid of an organized cloud.
//
// Two remaining (non-ground) points p and q, n = max(|du|, |dv|) pixels apart, are linked when
//   n <= clustering_radius                                     (the grid neighbourhood), and
//   exp(-|p - q| / lambda) >= clustering_strictness / 100      (the probability test),
// where lambda = GAP_SCALE * n * z * pitch is the gap expected between two samples n pixels apart on one
// smooth surface at depth z (pitch = the camera's angle per pixel; GAP_SCALE allows for surfaces seen at
// up to ~83 degrees from face-on). Equivalently |p - q| <= lambda * ln(100 / strictness).
// A cluster is a connected component of these links. A larger radius only adds links (merges); a larger
// strictness only removes links (splits).
import { SeededRandom } from '../../../camera/fake/random.js';
import { Scratch } from './scratch.js';

export const GAP_SCALE = 8;

export interface ClusteringParams {
  clusteringRadius: number;
  clusteringStrictness: number;
}

/** Largest 3D gap per (pixel offset x depth) that still links two points: mm per (px * mm). */
export function linkSlope(pitch: number, strictness: number): number {
  return GAP_SCALE * pitch * Math.log(100 / strictness);
}

/**
 * The camera's angle per pixel, from the cloud itself: the median of |x/z| differences between
 * horizontally adjacent valid points (exactly 1/fx for a pinhole camera).
 */
export function estimatePitch(positions: Float32Array, width: number, height: number, random = new SeededRandom(7)): number {
  const samples: number[] = [];
  const n = width * height;
  for (let attempt = 0; attempt < 20000 && samples.length < 2001; attempt++) {
    const i = random.int(n);
    if (i % width === width - 1) continue;
    const za = positions[i * 3 + 2];
    const zb = positions[i * 3 + 5];
    if (!(za > 0) || !(zb > 0)) continue;
    samples.push(Math.abs(positions[i * 3] / za - positions[i * 3 + 3] / zb));
  }
  if (samples.length === 0) return 1 / 525; // a typical 640-pixel, 62-degree depth camera
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] || 1 / 525;
}

/**
 * Labels the points where `kept` is 1 with component ids 0..count-1 (-1 elsewhere).
 * Union-find in one raster pass.
 */
export function clusterGrid(
  positions: Float32Array,
  width: number,
  height: number,
  kept: Uint8Array,
  params: ClusteringParams,
  pitch: number,
  scratch = new Scratch(),
): { labels: Int32Array; count: number } {
  const r = params.clusteringRadius;
  const slope = linkSlope(pitch, params.clusteringStrictness);
  // Backward neighbours only (earlier in raster order), so each pair is tested once and the current
  // point is still its own root when its first link is found.
  const offsets: number[] = []; // du, dv (<= 0), (n * slope)^2 / 4 since z below is the sum of two depths
  for (let dv = -r; dv <= 0; dv++) {
    for (let du = -r; du <= r; du++) {
      if (dv === 0 && du >= 0) continue;
      const n = Math.max(Math.abs(du), -dv);
      offsets.push(du, dv, (n * slope * n * slope) / 4);
    }
  }
  const n = width * height;
  const parent = scratch.int32('parent', n);
  for (let i = 0; i < n; i++) parent[i] = kept[i] ? i : -1;
  const find = (i: number): number => {
    while (parent[i] !== i) {
      const g = parent[parent[i]];
      parent[i] = g;
      i = g;
    }
    return i;
  };
  const p = positions;
  const link = (i: number, j: number, root: number, limit: number): number => {
    const dx = p[j * 3] - p[i * 3],
      dy = p[j * 3 + 1] - p[i * 3 + 1],
      dz = p[j * 3 + 2] - p[i * 3 + 2];
    const zs = p[i * 3 + 2] + p[j * 3 + 2];
    if (dx * dx + dy * dy + dz * dz > limit * zs * zs) return root;
    const other = find(j);
    if (other === root) return root;
    // Union by smaller index keeps every root the first point of its component in raster order.
    if (other < root) {
      parent[root] = other;
      return other;
    }
    parent[other] = root;
    return root;
  };
  if (r === 1) {
    // The default 8-neighbourhood, unrolled and inlined: left, up-left, up, up-right.
    const limit = offsets[2];
    const neighbours = [-1, -width - 1, -width, -width + 1];
    for (let v = 0; v < height; v++) {
      const row = v * width;
      for (let u = 0; u < width; u++) {
        const i = row + u;
        if (!kept[i]) continue;
        const x = p[i * 3],
          y = p[i * 3 + 1],
          z = p[i * 3 + 2];
        let root = i;
        for (let k = 0, end = v > 0 ? 4 : 1; k < end; k++) {
          if ((k === 0 || k === 1) && u === 0) continue;
          if (k === 3 && u + 1 === width) continue;
          let j = i + neighbours[k];
          if (!kept[j]) continue;
          const dx = p[j * 3] - x,
            dy = p[j * 3 + 1] - y,
            dz = p[j * 3 + 2] - z;
          const zs = z + p[j * 3 + 2];
          if (dx * dx + dy * dy + dz * dz > limit * zs * zs) continue;
          while (parent[j] !== j) {
            const g = parent[parent[j]];
            parent[j] = g;
            j = g;
          }
          if (j === root) continue;
          // Union by smaller index keeps every root the first point of its component in raster order.
          if (j < root) {
            parent[root] = j;
            root = j;
          } else parent[j] = root;
        }
        parent[i] = root;
      }
    }
  } else {
    for (let v = 0; v < height; v++) {
      for (let u = 0; u < width; u++) {
        const i = v * width + u;
        if (!kept[i]) continue;
        let root = i;
        for (let k = 0; k < offsets.length; k += 3) {
          const uu = u + offsets[k];
          const vv = v + offsets[k + 1];
          if (uu < 0 || uu >= width || vv < 0) continue;
          const j = vv * width + uu;
          if (kept[j]) root = link(i, j, root, offsets[k + 2]);
        }
        parent[i] = root;
      }
    }
  }
  const labels = scratch.int32('labels', n).fill(-1);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (parent[i] < 0) continue;
    const root = find(i);
    if (root === i) labels[i] = count++;
    else labels[i] = labels[root]; // root < i always, so it is already labelled
  }
  return { labels, count };
}
