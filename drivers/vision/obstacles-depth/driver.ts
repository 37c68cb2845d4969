// obstacles_depth in its worker: fetches the camera's cloud straight from the camera's worker (the point
// buffers are transferred, not copied), segments it here, encodes each object as PCD here, and transfers
// the results back, so the gRPC thread only awaits.
import type { Camera } from '../../../plugins/apis/camera.js';
import type { Vision, VisionObject } from '../../../plugins/apis/vision.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import { writePcd } from '../../camera/pointcloud/pcd-writer.js';
import { countValid } from '../../camera/pointcloud/point-cloud.js';
import type { ObstaclesDepthAttributes } from './attributes.js';
import { tiltFromIdealDegs } from './segmenter/plane.js';
import { Segmenter, type Segmentation } from './segmenter/segmenter.js';

interface FrameReport {
  points: number;
  valid_points: number;
  objects: number;
  segment_ms: number;
  ground: null | { normal: number[]; offset_mm: number; tilt_degs: number; inliers: number };
}

function report(cloudPoints: number, valid: number, result: Segmentation, ms: number): FrameReport {
  const g = result.ground;
  return {
    points: cloudPoints,
    valid_points: valid,
    objects: result.segments.length,
    segment_ms: Math.round(ms * 100) / 100,
    ground: g ? { normal: [g.plane.nx, g.plane.ny, g.plane.nz], offset_mm: g.plane.d, tilt_degs: tiltFromIdealDegs(g.plane), inliers: g.inliers } : null,
  };
}

export default defineDriver<ObstaclesDepthAttributes, Vision>(({ attributes, dependencies, logger }) => {
  const { camera_name: cameraName, ...params } = attributes;
  const segmenter = new Segmenter(params);
  let last: FrameReport | undefined;

  return {
    async getObjectPointClouds(requested) {
      if (requested && requested !== cameraName) {
        throw invalidArgument(`camera_name ${JSON.stringify(requested)}: this obstacles_depth service segments camera ${JSON.stringify(cameraName)} (its camera_name attribute)`);
      }
      const cloud = await dependencies.get<Camera>(cameraName).getPointCloud({});
      const started = performance.now();
      const result = segmenter.segment(cloud);
      const ms = performance.now() - started;
      const objects: VisionObject[] = result.segments.map((s) => {
        const pcd = writePcd(s.cloud);
        return {
          pointCloud: new Uint8Array(pcd.buffer, pcd.byteOffset, pcd.byteLength),
          referenceFrame: cameraName,
          center: s.center,
          dims: s.dims,
          label: cameraName,
        };
      });
      last = report(cloud.width * cloud.height, countValid(cloud), result, ms);
      logger.debug('segmented', { ...last });
      return transfer(objects, objects.map((o) => o.pointCloud.buffer as ArrayBuffer));
    },
    doCommand(command) {
      // `attributes`: the effective attributes with defaults. `last_frame`: what the last segmentation saw.
      if (command.attributes === true) return { ...attributes };
      if (command.last_frame === true) return { last_frame: last ?? null };
      throw invalidArgument(`command: must contain attributes: true or last_frame: true, got ${Object.keys(command).join(', ') || 'nothing'}`);
    },
  };
});
