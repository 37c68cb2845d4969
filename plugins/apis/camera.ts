import type { Resource } from '../driver.js';
import { defineApi } from '../api.js';
import { callOf } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

export const CAMERA_API = defineApi<Camera>('core:component:camera');

/** Mime types of GetImage. */
export const DEPTH_PNG = 'image/vnd.platform.depth+png';
export const COLOR_PNG = 'image/png';
export const PCD_MIME = 'pointcloud/pcd';

/**
 * A point cloud inside the runtime: millimetres, camera frame (x right, y down, z forward). Typed arrays
 * rather than per-point objects so a 640x480 frame moves between threads without copying.
 */
export interface PointCloud {
  /** Points per row; for an unorganized cloud, the number of points. */
  width: number;
  /** Rows. 1 means unorganized; more means a width x height image grid. */
  height: number;
  /** x,y,z interleaved, millimetres. A point the sensor did not see is NaN. */
  positions: Float32Array;
  /** Optional packed colour per point, 0xAARRGGBB. */
  colors?: Uint32Array;
}

/** Pinhole intrinsics in pixels. */
export interface CameraIntrinsics {
  width: number;
  height: number;
  fx: number;
  fy: number;
  ppx: number;
  ppy: number;
}

export interface CameraImage {
  mimeType: string;
  data: Uint8Array;
  width: number;
  height: number;
}

export interface CameraProperties {
  supportsPcd: boolean;
  intrinsics?: CameraIntrinsics;
  mimeTypes: string[];
}

export interface Camera extends Resource {
  /** An image of the given mime type; '' is the camera's default stream. */
  getImage(mimeType: string, extra?: Record<string, unknown>): Promise<CameraImage> | CameraImage;
  /** The current cloud in millimetres; its buffers are transferred to the caller. */
  getPointCloud(extra?: Record<string, unknown>): Promise<PointCloud> | PointCloud;
  /** The current cloud as a PCD file in metres, encoded in the camera's own thread. */
  getPointCloudPcd(extra?: Record<string, unknown>): Promise<Uint8Array> | Uint8Array;
  getProperties(): Promise<CameraProperties> | CameraProperties;
}

export const CAMERA_DECLARATION: ApiDeclaration = {
  api: CAMERA_API,
  capture: {
    GetImage: {
      kind: 'binary',
      checkParams: (p) => (p.mime_type !== undefined && typeof p.mime_type !== 'string' ? 'mime_type must be a string' : undefined),
      calls: (p) => callOf('getImage', typeof p.mime_type === 'string' ? p.mime_type : ''),
      shape: ([value]) => {
        const image = value as CameraImage;
        return { kind: 'binary', binary: { data: image.data, mimeType: image.mimeType } };
      },
    },
    GetPointCloud: {
      kind: 'binary',
      calls: () => callOf('getPointCloudPcd'),
      shape: ([pcd]) => ({ kind: 'binary', binary: { data: pcd as Uint8Array, mimeType: 'pointcloud/pcd' } }),
    },
  },
};
