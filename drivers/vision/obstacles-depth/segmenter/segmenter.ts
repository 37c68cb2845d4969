// The obstacles_depth Segmenter: remove the ground plane, cluster what stands above it, return objects.
import type { PointCloud } from '../../../camera/pointcloud/point-cloud.js';
import type { SegmenterParams } from '../attributes.js';
import { clusterGrid, estimatePitch } from './clustering.js';
import { fitGroundPlane, type GroundPlaneFit } from './ground-plane.js';
import { organize } from './organize.js';
import { Scratch } from './scratch.js';
import { buildSegments, type Segment } from './segment.js';

export interface Segmentation {
  segments: Segment[];
  /** The ground plane that was removed, if one had at least min_points_in_plane points. */
  ground?: GroundPlaneFit;
  /** The best plane found within the tolerance, even when it was too small to remove. */
  candidate?: GroundPlaneFit;
}

export class Segmenter {
  private readonly scratch = new Scratch();

  constructor(readonly params: SegmenterParams) {}

  segment(cloud: PointCloud): Segmentation {
    const { width, height, positions } = cloud;
    const n = width * height;
    if (positions.length < n * 3) throw new RangeError(`cloud has ${positions.length / 3} points, ${width}x${height} needs ${n}`);
    const valid = this.scratch.int32('valid', n);
    let validCount = 0;
    for (let i = 0; i < n; i++) if (positions[i * 3 + 2] === positions[i * 3 + 2]) valid[validCount++] = i;

    const band = this.params.max_dist_from_plane_mm;
    const candidate = fitGroundPlane(
      positions,
      width,
      height,
      valid,
      validCount,
      {
        maxDistFromPlaneMm: band,
        groundAngleToleranceDegs: this.params.ground_angle_tolerance_degs,
      },
      undefined,
      this.scratch,
    );
    const ground = candidate && candidate.inliers >= this.params.min_points_in_plane ? candidate : undefined;

    // Obstacles are what stands above the ground: the plane's band and anything below it (holes,
    // the floor seen past a table's edge) are not.
    const kept = this.scratch.uint8('kept', n).fill(0);
    if (ground) {
      const { nx, ny, nz, d } = ground.plane;
      for (let k = 0; k < validCount; k++) {
        const o = valid[k] * 3;
        if (nx * positions[o] + ny * positions[o + 1] + nz * positions[o + 2] + d > band) kept[valid[k]] = 1;
      }
    } else {
      for (let k = 0; k < validCount; k++) kept[valid[k]] = 1;
    }

    const clustering = { clusteringRadius: this.params.clustering_radius, clusteringStrictness: this.params.clustering_strictness };
    let labels: Int32Array;
    let count: number;
    if (height > 1) {
      ({ labels, count } = clusterGrid(positions, width, height, kept, clustering, estimatePitch(positions, width, height), this.scratch));
    } else {
      const view = organize(positions, kept);
      labels = this.scratch.int32('labels', n).fill(-1);
      count = 0;
      if (view) {
        const grid = clusterGrid(view.positions, view.width, view.height, view.kept, clustering, view.pitch, new Scratch());
        count = grid.count;
        for (let i = 0; i < n; i++) if (view.cellOf[i] >= 0) labels[i] = grid.labels[view.cellOf[i]];
      }
    }
    return { segments: buildSegments(cloud, labels, count, this.params.min_points_in_segment), ground, candidate };
  }
}
