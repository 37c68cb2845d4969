// Intrinsics recovered from an organized cloud: for a pinhole camera u = fx * x/z + ppx and
// v = fy * y/z + ppy, so two straight-line fits over the valid points give fx, ppx, fy and ppy.
import type { CameraIntrinsics, PointCloud } from '../../../plugins/apis/camera.js';

function lineFit(xs: Float64Array, ys: Float64Array, n: number): { slope: number; intercept: number } | undefined {
  let sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i];
    sy += ys[i];
    sxx += xs[i] * xs[i];
    sxy += xs[i] * ys[i];
  }
  const den = n * sxx - sx * sx;
  if (n < 2 || !(Math.abs(den) > 1e-12)) return undefined;
  const slope = (n * sxy - sx * sy) / den;
  return { slope, intercept: (sy - slope * sx) / n };
}

/** Undefined for an unorganized cloud or one too sparse to fit. */
export function fitIntrinsics(cloud: PointCloud, maxSamples = 20000): CameraIntrinsics | undefined {
  const { width, height, positions } = cloud;
  if (height <= 1) return undefined;
  const n = width * height;
  const step = Math.max(1, Math.floor(n / maxSamples));
  const a = new Float64Array(Math.ceil(n / step));
  const b = new Float64Array(a.length);
  const us = new Float64Array(a.length);
  const vs = new Float64Array(a.length);
  let m = 0;
  for (let i = 0; i < n; i += step) {
    const z = positions[i * 3 + 2];
    if (!(z > 0)) continue;
    a[m] = positions[i * 3] / z;
    b[m] = positions[i * 3 + 1] / z;
    us[m] = i % width;
    vs[m] = Math.floor(i / width);
    m++;
  }
  const fu = lineFit(a, us, m);
  const fv = lineFit(b, vs, m);
  if (!fu || !fv || !(fu.slope > 0) || !(fv.slope > 0)) return undefined;
  return { width, height, fx: fu.slope, fy: fv.slope, ppx: fu.intercept, ppy: fv.intercept };
}
