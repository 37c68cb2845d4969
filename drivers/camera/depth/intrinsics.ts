// Pinhole intrinsics of a depth camera, in pixels.
export interface Intrinsics {
  width: number;
  height: number;
  fx: number;
  fy: number;
  ppx: number;
  ppy: number;
}

/** Intrinsics of a camera with the given horizontal field of view and centred principal point. */
export function intrinsicsFromFov(width: number, height: number, horizontalFovDegs: number): Intrinsics {
  const f = width / 2 / Math.tan((horizontalFovDegs * Math.PI) / 360);
  return { width, height, fx: f, fy: f, ppx: (width - 1) / 2, ppy: (height - 1) / 2 };
}
