// The pcd_file camera in its worker: reads the file once at construction (a missing or corrupt file fails
// the resource with the reason), then serves copies of it; `reload` re-reads it.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { COLOR_PNG, DEPTH_PNG, type Camera, type CameraImage, type PointCloud } from '../../../plugins/apis/camera.js';
import { defineDriver } from '../../../plugins/driver.js';
import { DriverError, failedPrecondition, invalidArgument } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import { encodeColorPng } from '../depth/color-png.js';
import { encodeDepthPng } from '../depth/depth-png.js';
import { readPcd } from '../../../plugins/formats/pcd/pcd-reader.js';
import { writePcd } from '../../../plugins/formats/pcd/pcd-writer.js';
import { transferables } from '../pointcloud/point-cloud.js';
import { fitIntrinsics } from './intrinsics-fit.js';
import type { PcdFileCameraAttributes } from './model.js';

async function load(path: string): Promise<PointCloud> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new DriverError('FAILED_PRECONDITION', `path ${JSON.stringify(path)}: cannot be read (${(err as Error).message})`);
  }
  try {
    return readPcd(bytes);
  } catch (err) {
    throw new DriverError('FAILED_PRECONDITION', `path ${JSON.stringify(path)}: not a valid PCD file: ${(err as Error).message}`);
  }
}

const copy = (c: PointCloud): PointCloud => ({ width: c.width, height: c.height, positions: c.positions.slice(), colors: c.colors?.slice() });

export default defineDriver<PcdFileCameraAttributes, Camera>(async ({ attributes, logger }) => {
  const path = resolve(attributes.path);
  let cloud = await load(path);
  let intrinsics = fitIntrinsics(cloud);
  logger.info('point cloud loaded', { path, width: cloud.width, height: cloud.height, organized: cloud.height > 1 });

  const requireGrid = () => {
    if (cloud.height <= 1) throw failedPrecondition(`the cloud in ${attributes.path} is unorganized (height 1), so it has no image`);
  };
  return {
    getImage(mimeType): CameraImage {
      const { width, height } = cloud;
      if (mimeType === '' || mimeType === DEPTH_PNG) {
        requireGrid();
        const depth = new Uint16Array(width * height);
        for (let i = 0; i < depth.length; i++) {
          const z = cloud.positions[i * 3 + 2];
          depth[i] = z > 0 ? Math.min(65535, Math.round(z)) : 0;
        }
        return { mimeType: DEPTH_PNG, data: encodeDepthPng({ width, height, depth }), width, height };
      }
      if (mimeType === COLOR_PNG) {
        requireGrid();
        if (!cloud.colors) throw failedPrecondition(`the cloud in ${attributes.path} has no rgb or rgba field, so it has no colour image`);
        return { mimeType: COLOR_PNG, data: encodeColorPng(width, height, cloud.colors), width, height };
      }
      throw invalidArgument(`mime_type ${JSON.stringify(mimeType)}: must be ${DEPTH_PNG}, ${COLOR_PNG} or empty`);
    },
    getPointCloud() {
      const c = copy(cloud);
      return transfer(c, transferables(c));
    },
    getPointCloudPcd() {
      const pcd = writePcd(cloud);
      return transfer(new Uint8Array(pcd.buffer, pcd.byteOffset, pcd.byteLength), [pcd.buffer as ArrayBuffer]);
    },
    getProperties() {
      const mimeTypes = cloud.height > 1 ? (cloud.colors ? [DEPTH_PNG, COLOR_PNG] : [DEPTH_PNG]) : [];
      return { supportsPcd: true, intrinsics: intrinsics ? { ...intrinsics } : undefined, mimeTypes };
    },
    async doCommand(command) {
      if (command.reload === true) {
        cloud = await load(path);
        intrinsics = fitIntrinsics(cloud);
        return { width: cloud.width, height: cloud.height };
      }
      throw invalidArgument(`command: must contain reload: true, got ${Object.keys(command).join(', ') || 'nothing'}`);
    },
  };
});
