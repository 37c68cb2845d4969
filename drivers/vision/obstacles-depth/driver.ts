// obstacles_depth in its worker: fetches the camera's cloud straight from the camera's worker (the point
// buffers are transferred, not copied), segments it here, encodes each object as PCD here, and transfers
// the results back, so the gRPC thread only awaits.
import { CAMERA_API, DEPTH_PNG, type Camera, type PointCloud } from '../../../plugins/apis/camera.js';
import type { Vision, VisionObject } from '../../../plugins/apis/vision.js';
import { defineDriver, type Remote } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import { decodeDepthPng } from '../../camera/depth/depth-png.js';
import { depthToPointCloud, type DepthMap } from '../../camera/depth/projection.js';
import { writePcd } from '../../../plugins/formats/pcd/pcd-writer.js';
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

/** What the camera gives: its cloud, or a depth map when it has no point clouds. */
async function capture(camera: Remote<Camera>): Promise<{ cloud: PointCloud } | { depthOnly: DepthMap }> {
  const props = await camera.getProperties();
  if (props.supportsPcd) return { cloud: await camera.getPointCloud({}) };
  // A camera without point clouds (a module's, say): project its depth image through its intrinsics.
  const map = decodeDepthPng((await camera.getImage(DEPTH_PNG, {})).data);
  return props.intrinsics ? { cloud: depthToPointCloud(map, props.intrinsics) } : { depthOnly: map };
}

/** Without intrinsics there is no geometry: like the reference, one object at the median depth, on the axis. */
function medianDepthObject(map: DepthMap, cameraName: string): VisionObject[] {
  const depths = Array.from(map.depth.filter((d) => d > 0)).sort((a, b) => a - b);
  if (depths.length === 0) return [];
  const z = depths[depths.length >> 1];
  const pcd = writePcd({ width: 1, height: 1, positions: Float32Array.of(0, 0, z) });
  return [
    {
      pointCloud: new Uint8Array(pcd.buffer, pcd.byteOffset, pcd.byteLength),
      referenceFrame: cameraName,
      center: [0, 0, z],
      dims: [0, 0, 0],
      label: cameraName,
    },
  ];
}

export default defineDriver<ObstaclesDepthAttributes, Vision>(({ attributes, dependencies, logger }) => {
  const { camera_name: cameraName, ...params } = attributes;
  const segmenter = new Segmenter(params);
  let last: FrameReport | undefined;

  return {
    async getObjectPointClouds(requested) {
      if (requested && requested !== cameraName) {
        throw invalidArgument(
          `camera_name ${JSON.stringify(requested)}: this obstacles_depth service segments camera ${JSON.stringify(cameraName)} (its camera_name attribute)`,
        );
      }
      const captured = await capture(dependencies.get(CAMERA_API, cameraName));
      if ('depthOnly' in captured) {
        const objects = medianDepthObject(captured.depthOnly, cameraName);
        return transfer(
          objects,
          objects.map((o) => o.pointCloud.buffer as ArrayBuffer),
        );
      }
      const { cloud } = captured;
      const started = performance.now();
      const result = segmenter.segment(cloud);
      const ms = performance.now() - started;
      const objects: VisionObject[] = result.segments.map((s) => {
        // binary_compressed (LZF): an object of a full 640x480 frame is 4.3 MB as plain binary, over gRPC's
        // default 4 MB limit; compressed it is well under it (drivers/vision/obstacles-depth/MESSAGES.md).
        const pcd = writePcd(s.cloud, { encoding: 'binary_compressed' });
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
      return transfer(
        objects,
        objects.map((o) => o.pointCloud.buffer as ArrayBuffer),
      );
    },
    doCommand(command) {
      // `attributes`: the effective attributes with defaults. `last_frame`: what the last segmentation saw.
      if (command.attributes === true) return { ...attributes };
      if (command.last_frame === true) return { last_frame: last ?? null };
      throw invalidArgument(`command: must contain attributes: true or last_frame: true, got ${Object.keys(command).join(', ') || 'nothing'}`);
    },
  };
});
