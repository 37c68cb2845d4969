// The in-runtime point cloud: millimetres, camera frame (x right, y down, z forward). The type belongs to
// the camera API (plugins/apis/camera.ts); these are the helpers drivers use on it.
import type { PointCloud } from '../../../plugins/apis/camera.js';

export type { PointCloud };

export function pointCount(cloud: PointCloud): number {
  return cloud.width * cloud.height;
}

export function isOrganized(cloud: PointCloud): boolean {
  return cloud.height > 1;
}

/** Points with a position (the sensor saw something there). */
export function countValid(cloud: PointCloud): number {
  const p = cloud.positions;
  let n = 0;
  for (let i = 2; i < p.length; i += 3) if (p[i] === p[i]) n++;
  return n;
}

/** The buffers to list in a transfer list: they move to the receiving thread instead of being copied. */
export function transferables(cloud: PointCloud): ArrayBuffer[] {
  const list = [cloud.positions.buffer as ArrayBuffer];
  if (cloud.colors && cloud.colors.buffer !== cloud.positions.buffer) list.push(cloud.colors.buffer as ArrayBuffer);
  return list;
}
