// A plane n.p + d = 0 with unit normal n oriented "up" (toward -y in the camera frame), so n.p + d is
// the signed height of p above the plane, in millimetres.
export interface Plane {
  nx: number;
  ny: number;
  nz: number;
  d: number;
}

/** Angle in degrees between the plane's up normal and the ideal ground normal (0,-1,0). */
export function tiltFromIdealDegs(plane: Plane): number {
  return (Math.acos(Math.min(1, Math.max(-1, -plane.ny))) * 180) / Math.PI;
}

/** Flips a normal so it points up (ny <= 0), keeping the same plane. */
export function orientUp(nx: number, ny: number, nz: number, d: number): Plane {
  return ny > 0 ? { nx: -nx, ny: -ny, nz: -nz, d: -d } : { nx, ny, nz, d };
}

/**
 * Least-squares plane through the points selected by `indices` (point index into xyz positions):
 * the centroid plus the eigenvector of the covariance with the smallest eigenvalue (Jacobi sweeps).
 */
export function fitPlane(positions: Float32Array | Float64Array, indices: Int32Array, count: number): Plane | undefined {
  if (count < 3) return undefined;
  let sx = 0,
    sy = 0,
    sz = 0;
  for (let k = 0; k < count; k++) {
    const o = indices[k] * 3;
    sx += positions[o];
    sy += positions[o + 1];
    sz += positions[o + 2];
  }
  const cx = sx / count,
    cy = sy / count,
    cz = sz / count;
  let xx = 0,
    xy = 0,
    xz = 0,
    yy = 0,
    yz = 0,
    zz = 0;
  for (let k = 0; k < count; k++) {
    const o = indices[k] * 3;
    const x = positions[o] - cx,
      y = positions[o + 1] - cy,
      z = positions[o + 2] - cz;
    xx += x * x;
    xy += x * y;
    xz += x * z;
    yy += y * y;
    yz += y * z;
    zz += z * z;
  }
  const n = smallestEigenvector([xx, xy, xz, xy, yy, yz, xz, yz, zz]);
  if (!n) return undefined;
  return orientUp(n[0], n[1], n[2], -(n[0] * cx + n[1] * cy + n[2] * cz));
}

/** Jacobi eigen-decomposition of a symmetric 3x3 (row-major); returns the unit eigenvector of the smallest eigenvalue. */
function smallestEigenvector(m: number[]): [number, number, number] | undefined {
  const a = m.slice();
  const v = [1, 0, 0, 0, 1, 0, 0, 0, 1];
  for (let sweep = 0; sweep < 50; sweep++) {
    const off = Math.abs(a[1]) + Math.abs(a[2]) + Math.abs(a[5]);
    if (off < 1e-12 * (Math.abs(a[0]) + Math.abs(a[4]) + Math.abs(a[8]) + 1e-300)) break;
    for (const [p, q] of [
      [0, 1],
      [0, 2],
      [1, 2],
    ]) {
      const apq = a[p * 3 + q];
      if (Math.abs(apq) < 1e-300) continue;
      const theta = (a[q * 3 + q] - a[p * 3 + p]) / (2 * apq);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1);
      const s = t * c;
      for (let k = 0; k < 3; k++) {
        const akp = a[k * 3 + p],
          akq = a[k * 3 + q];
        a[k * 3 + p] = c * akp - s * akq;
        a[k * 3 + q] = s * akp + c * akq;
      }
      for (let k = 0; k < 3; k++) {
        const apk = a[p * 3 + k],
          aqk = a[q * 3 + k];
        a[p * 3 + k] = c * apk - s * aqk;
        a[q * 3 + k] = s * apk + c * aqk;
      }
      for (let k = 0; k < 3; k++) {
        const vkp = v[k * 3 + p],
          vkq = v[k * 3 + q];
        v[k * 3 + p] = c * vkp - s * vkq;
        v[k * 3 + q] = s * vkp + c * vkq;
      }
    }
  }
  let best = 0;
  for (let k = 1; k < 3; k++) if (a[k * 4] < a[best * 4]) best = k;
  const x = v[best],
    y = v[3 + best],
    z = v[6 + best];
  const len = Math.hypot(x, y, z);
  if (!(len > 0)) return undefined;
  return [x / len, y / len, z / len];
}
