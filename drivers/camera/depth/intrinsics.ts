import type { CameraIntrinsics } from '../../../plugins/apis/camera.js';

/** Pinhole intrinsics of a depth camera, in pixels: the camera API's own type. */
export type Intrinsics = CameraIntrinsics;

/** Intrinsics of a camera with the given horizontal field of view and centred principal point. */
export function intrinsicsFromFov(width: number, height: number, horizontalFovDegs: number): Intrinsics {
  const f = width / 2 / Math.tan((horizontalFovDegs * Math.PI) / 360);
  return { width, height, fx: f, fy: f, ppx: (width - 1) / 2, ppy: (height - 1) / 2 };
}
