// The `pcd_file` camera: replays a PCD file (ascii, binary or binary_compressed; organized or not).
import * as z from 'zod';
import { CAMERA_API } from '../../../plugins/apis/camera.js';
import { defineModel } from '../../../plugins/contract.js';

export const pcdFileCameraAttributes = z.strictObject({
  /** The PCD file; relative paths are resolved against the runtime's working directory. */
  path: z.string('is required and must be a string').min(1, 'must not be empty'),
});

export type PcdFileCameraAttributes = z.output<typeof pcdFileCameraAttributes>;

export const pcdFileCameraModel = defineModel({
  api: CAMERA_API,
  model: 'pcd_file',
  attributes: pcdFileCameraAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A camera that replays a point cloud from a PCD file.',
});
