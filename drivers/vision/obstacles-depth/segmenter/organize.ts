// Gives an unorganized cloud an image grid so the grid clustering applies to it too: each point goes to
// the cell of its viewing direction (x/z, y/z), cells sized so the grid has about one cell per point.
// The nearest point of a cell represents it; the other points of the cell join the representative's cluster.

const MAX_CELLS_PER_AXIS = 4096;

export interface OrganizedView {
  width: number;
  height: number;
  /** Representative positions per cell (NaN in empty cells). */
  positions: Float32Array;
  kept: Uint8Array;
  /** Cell of each source point (-1 when the point is not kept). */
  cellOf: Int32Array;
  /** Angle per cell. */
  pitch: number;
}

function percentile(values: Float64Array, q: number): number {
  return values[Math.min(values.length - 1, Math.max(0, Math.round(q * (values.length - 1))))];
}

export function organize(positions: Float32Array, kept: Uint8Array): OrganizedView | undefined {
  const n = kept.length;
  let m = 0;
  for (let i = 0; i < n; i++) if (kept[i] && positions[i * 3 + 2] > 0) m++;
  if (m === 0) return undefined;
  const a = new Float64Array(m);
  const b = new Float64Array(m);
  for (let i = 0, k = 0; i < n; i++) {
    const z = positions[i * 3 + 2];
    if (!kept[i] || !(z > 0)) continue;
    a[k] = positions[i * 3] / z;
    b[k++] = positions[i * 3 + 1] / z;
  }
  const sa = a.slice().sort();
  const sb = b.slice().sort();
  // Pitch from the 1-99% extent so a few stray points do not make the cells coarse.
  const spanA = Math.max(percentile(sa, 0.99) - percentile(sa, 0.01), 1e-9);
  const spanB = Math.max(percentile(sb, 0.99) - percentile(sb, 0.01), 1e-9);
  let pitch = Math.sqrt((spanA * spanB) / m) || 1e-3;
  const minA = sa[0],
    minB = sb[0];
  pitch = Math.max(pitch, (sa[m - 1] - minA) / (MAX_CELLS_PER_AXIS - 1), (sb[m - 1] - minB) / (MAX_CELLS_PER_AXIS - 1));
  const width = Math.floor((sa[m - 1] - minA) / pitch) + 1;
  const height = Math.max(2, Math.floor((sb[m - 1] - minB) / pitch) + 1);
  const cells = width * height;
  const rep = new Int32Array(cells).fill(-1);
  const cellOf = new Int32Array(n).fill(-1);
  for (let i = 0, k = 0; i < n; i++) {
    const z = positions[i * 3 + 2];
    if (!kept[i] || !(z > 0)) continue;
    const cell = Math.floor((b[k] - minB) / pitch) * width + Math.floor((a[k] - minA) / pitch);
    k++;
    cellOf[i] = cell;
    if (rep[cell] < 0 || z < positions[rep[cell] * 3 + 2]) rep[cell] = i;
  }
  const grid = new Float32Array(cells * 3).fill(NaN);
  const gridKept = new Uint8Array(cells);
  for (let c = 0; c < cells; c++) {
    const i = rep[c];
    if (i < 0) continue;
    grid.set(positions.subarray(i * 3, i * 3 + 3), c * 3);
    gridKept[c] = 1;
  }
  return { width, height, positions: grid, kept: gridKept, cellOf, pitch };
}
