// The in-runtime point cloud: millimetres, camera frame (x right, y down, z forward).
// Structure-of-buffers rather than per-point objects so a 640x480 frame is two typed arrays that can be
// transferred between threads without copying.

export interface PointCloud {
  /** Points per row. For an unorganized cloud this is the number of points. */
  width: number;
  /** Rows. 1 means unorganized; >1 means the points are a width x height image grid. */
  height: number;
  /** x,y,z interleaved, millimetres. A point the sensor did not see is NaN in all three. */
  positions: Float32Array;
  /** Optional packed colour per point, 0xAARRGGBB (alpha 0 when the source had none). */
  colors?: Uint32Array;
}

export function pointCount(cloud: PointCloud): number {
  return cloud.width * cloud.height;
}

export function isOrganized(cloud: PointCloud): boolean {
  return cloud.height > 1;
}

/** A point is valid when it has a finite position in front of the camera plane or beside it. */
export function countValid(cloud: PointCloud): number {
  const p = cloud.positions;
  let n = 0;
  for (let i = 0; i < p.length; i += 3) if (p[i + 2] === p[i + 2] && Number.isFinite(p[i])) n++;
  return n;
}

/** The buffers to list in postMessage/Piscina transfer lists. */
export function transferables(cloud: PointCloud): ArrayBuffer[] {
  const list = [cloud.positions.buffer as ArrayBuffer];
  if (cloud.colors) list.push(cloud.colors.buffer as ArrayBuffer);
  return list;
}
