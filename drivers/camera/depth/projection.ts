// Depth map -> organized point cloud through the pinhole model (FACTS: x=(u-ppx)*z/fx, y=(v-ppy)*z/fy,
// millimetres). A zero depth means "no reading" and becomes a NaN point so the grid stays intact.
import type { PointCloud } from '../pointcloud/point-cloud.js';
import type { Intrinsics } from './intrinsics.js';

/** A depth image: one unsigned millimetre value per pixel, row-major. */
export interface DepthMap {
  width: number;
  height: number;
  depth: Uint16Array;
}

export function depthToPointCloud(map: DepthMap, k: Intrinsics): PointCloud {
  const { width, height, depth } = map;
  if (depth.length !== width * height) throw new RangeError(`depth has ${depth.length} values, ${width}x${height} needs ${width * height}`);
  const positions = new Float32Array(width * height * 3);
  const invFx = 1 / k.fx;
  const invFy = 1 / k.fy;
  for (let v = 0, i = 0; v < height; v++) {
    const ry = (v - k.ppy) * invFy;
    for (let u = 0; u < width; u++, i++) {
      const z = depth[i];
      const o = i * 3;
      if (z === 0) {
        positions[o] = positions[o + 1] = positions[o + 2] = NaN;
        continue;
      }
      positions[o] = (u - k.ppx) * invFx * z;
      positions[o + 1] = ry * z;
      positions[o + 2] = z;
    }
  }
  return { width, height, positions };
}
