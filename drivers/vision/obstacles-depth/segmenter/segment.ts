// The objects a Segmenter returns: the points of each cluster and its axis-aligned box, camera frame, mm.
import type { PointCloud } from '../../../camera/pointcloud/point-cloud.js';

export interface Segment {
  /** The object's points as an unorganized cloud (height 1), millimetres. */
  cloud: PointCloud;
  /** Centre of the axis-aligned box around the points. */
  center: [number, number, number];
  /** Box extents along x, y and z. */
  dims: [number, number, number];
}

/**
 * Gathers the points of each label with at least `minPoints` members into Segments, largest first.
 * Two passes over the labels (count, then fill) so each segment is one exactly sized buffer.
 */
export function buildSegments(cloud: PointCloud, labels: Int32Array, labelCount: number, minPoints: number): Segment[] {
  const sizes = new Int32Array(labelCount);
  for (let i = 0; i < labels.length; i++) if (labels[i] >= 0) sizes[labels[i]]++;
  const slot = new Int32Array(labelCount).fill(-1);
  const order: number[] = [];
  for (let l = 0; l < labelCount; l++) if (sizes[l] >= minPoints) order.push(l);
  order.sort((a, b) => sizes[b] - sizes[a] || a - b);
  order.forEach((l, s) => (slot[l] = s));
  const count = order.length;
  const fill = new Int32Array(count);
  // min x,y,z then max x,y,z per segment
  const bounds = new Float64Array(count * 6);
  for (let s = 0; s < count; s++) bounds.set([Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity], s * 6);
  const positions = order.map((l) => new Float32Array(sizes[l] * 3));
  const colors = cloud.colors ? order.map((l) => new Uint32Array(sizes[l])) : undefined;
  const p = cloud.positions;
  const source = cloud.colors;
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i];
    if (l < 0) continue;
    const s = slot[l];
    if (s < 0) continue;
    const out = positions[s];
    const k = fill[s]++;
    const b = s * 6;
    const x = p[i * 3],
      y = p[i * 3 + 1],
      z = p[i * 3 + 2];
    out[k * 3] = x;
    out[k * 3 + 1] = y;
    out[k * 3 + 2] = z;
    if (x < bounds[b]) bounds[b] = x;
    if (x > bounds[b + 3]) bounds[b + 3] = x;
    if (y < bounds[b + 1]) bounds[b + 1] = y;
    if (y > bounds[b + 4]) bounds[b + 4] = y;
    if (z < bounds[b + 2]) bounds[b + 2] = z;
    if (z > bounds[b + 5]) bounds[b + 5] = z;
    if (colors) colors[s][k] = source![i];
  }
  return positions.map((pos, s) => {
    const b = s * 6;
    return {
      cloud: { width: fill[s], height: 1, positions: pos, colors: colors?.[s] },
      center: [0, 1, 2].map((c) => (bounds[b + c] + bounds[b + 3 + c]) / 2) as [number, number, number],
      dims: [0, 1, 2].map((c) => bounds[b + 3 + c] - bounds[b + c]) as [number, number, number],
    };
  });
}
