// Reads PCD files (ascii, binary, binary_compressed; organized or not; any field layout) into the
// runtime's PointCloud: metres become millimetres, NaN/inf points become NaN, colour comes from an
// `rgb`/`rgba` field or from separate `r g b [a]` fields. Other fields (normals, intensity, ...) are skipped.
import { lzfDecompress, LzfError } from './lzf.js';
import { parsePcdHeader, PcdError, type PcdField, type PcdHeader } from './pcd-header.js';
import type { PointCloud } from '../../apis/camera.js';

export type { PointCloud };

const MM_PER_M = 1000;

type Getter = (address: number) => number;

function getterFor(view: DataView, field: PcdField): Getter {
  const { type, size } = field;
  if (type === 'F') return size === 4 ? (a) => view.getFloat32(a, true) : (a) => view.getFloat64(a, true);
  if (type === 'U') {
    if (size === 1) return (a) => view.getUint8(a);
    if (size === 2) return (a) => view.getUint16(a, true);
    if (size === 4) return (a) => view.getUint32(a, true);
    return (a) => Number(view.getBigUint64(a, true));
  }
  if (size === 1) return (a) => view.getInt8(a);
  if (size === 2) return (a) => view.getInt16(a, true);
  if (size === 4) return (a) => view.getInt32(a, true);
  return (a) => Number(view.getBigInt64(a, true));
}

/** Where element k of `field` for point i lives: base + i * stride. */
interface Column {
  get: Getter;
  base: number;
  stride: number;
}

/** Fetches the raw bits of a 4-byte field as uint32 (PCL stores rgb as float-typed packed bytes). */
function bitsGetter(view: DataView): Getter {
  return (a) => view.getUint32(a, true);
}

function findField(header: PcdHeader, name: string): PcdField | undefined {
  return header.fields.find((f) => f.name.toLowerCase() === name);
}

function binaryColumns(header: PcdHeader, view: DataView, compressed: boolean) {
  // binary: array of point records. binary_compressed: each field's values for all points, one field after another.
  let fieldStart = 0;
  const starts = new Map<PcdField, number>();
  for (const f of header.fields) {
    starts.set(f, fieldStart);
    fieldStart += f.size * f.count * header.points;
  }
  return (field: PcdField, raw = false): Column => ({
    get: raw ? bitsGetter(view) : getterFor(view, field),
    base: compressed ? starts.get(field)! : field.offset,
    stride: compressed ? field.size * field.count : header.pointSize,
  });
}

function dataView(bytes: Uint8Array, header: PcdHeader): DataView {
  const body = bytes.subarray(header.dataOffset);
  if (header.encoding === 'binary') {
    const need = header.pointSize * header.points;
    if (body.length < need)
      throw new PcdError(`PCD data: binary section has ${body.length} bytes, ${header.points} points of ${header.pointSize} bytes need ${need}`);
    return new DataView(body.buffer, body.byteOffset, need);
  }
  if (body.length < 8) throw new PcdError('PCD data: binary_compressed section is missing its size words');
  const sizes = new DataView(body.buffer, body.byteOffset, 8);
  const compressedSize = sizes.getUint32(0, true);
  const rawSize = sizes.getUint32(4, true);
  const need = header.pointSize * header.points;
  if (rawSize !== need) throw new PcdError(`PCD data: binary_compressed declares ${rawSize} uncompressed bytes, the header needs ${need}`);
  if (body.length < 8 + compressedSize)
    throw new PcdError(`PCD data: binary_compressed declares ${compressedSize} compressed bytes, file has ${body.length - 8}`);
  let raw: Uint8Array;
  try {
    raw = rawSize === 0 ? new Uint8Array(0) : lzfDecompress(body.subarray(8, 8 + compressedSize), rawSize);
  } catch (err) {
    if (err instanceof LzfError) throw new PcdError(`PCD data: corrupt binary_compressed section: ${err.message}`);
    throw err;
  }
  return new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
}

function readBinary(bytes: Uint8Array, header: PcdHeader, x: PcdField, y: PcdField, z: PcdField): PointCloud {
  const view = dataView(bytes, header);
  const column = binaryColumns(header, view, header.encoding === 'binary_compressed');
  const n = header.points;
  const positions = new Float32Array(n * 3);
  const cx = column(x);
  const cy = column(y);
  const cz = column(z);
  for (let i = 0; i < n; i++) {
    const px = cx.get(cx.base + i * cx.stride);
    const py = cy.get(cy.base + i * cy.stride);
    const pz = cz.get(cz.base + i * cz.stride);
    storePoint(positions, i, px, py, pz);
  }
  const colors = readColors(header, n, (field, raw) => {
    const c = column(field, raw);
    return (i) => c.get(c.base + i * c.stride);
  });
  return { width: header.width, height: header.height, positions, colors };
}

function storePoint(positions: Float32Array, i: number, x: number, y: number, z: number): void {
  const o = i * 3;
  if (Number.isFinite(x) && Number.isFinite(y) && Number.isFinite(z)) {
    positions[o] = x * MM_PER_M;
    positions[o + 1] = y * MM_PER_M;
    positions[o + 2] = z * MM_PER_M;
  } else {
    positions[o] = positions[o + 1] = positions[o + 2] = NaN;
  }
}

type ColumnReader = (field: PcdField, raw: boolean) => (i: number) => number;

function readColors(header: PcdHeader, n: number, reader: ColumnReader): Uint32Array | undefined {
  const packed = findField(header, 'rgba') ?? findField(header, 'rgb');
  if (packed && packed.size === 4) {
    const at = reader(packed, true);
    const colors = new Uint32Array(n);
    for (let i = 0; i < n; i++) colors[i] = at(i);
    return colors;
  }
  const [r, g, b] = ['r', 'g', 'b'].map((c) => findField(header, c));
  if (!r || !g || !b) return undefined;
  const a = findField(header, 'a');
  const [gr, gg, gb] = [reader(r, false), reader(g, false), reader(b, false)];
  const ga = a ? reader(a, false) : undefined;
  const colors = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    colors[i] = ((((ga ? ga(i) : 0) & 0xff) << 24) | ((gr(i) & 0xff) << 16) | ((gg(i) & 0xff) << 8) | (gb(i) & 0xff)) >>> 0;
  }
  return colors;
}

function readAscii(bytes: Uint8Array, header: PcdHeader, x: PcdField, y: PcdField, z: PcdField): PointCloud {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + header.dataOffset, bytes.length - header.dataOffset).toString('latin1');
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const n = header.points;
  if (lines.length < n) throw new PcdError(`PCD data: ascii section has ${lines.length} points, header declares ${n}`);
  // Token index of each field's first element within a line.
  const tokenIndex = new Map<PcdField, number>();
  let t = 0;
  for (const f of header.fields) {
    tokenIndex.set(f, t);
    t += f.count;
  }
  const rows: string[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    rows[i] = lines[i].split(/\s+/);
    if (rows[i].length < t) throw new PcdError(`PCD data: ascii point ${i} has ${rows[i].length} values, the fields need ${t}`);
  }
  const value = (i: number, f: PcdField) => Number(rows[i][tokenIndex.get(f)!]);
  const positions = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) storePoint(positions, i, value(i, x), value(i, y), value(i, z));
  const scratch = new DataView(new ArrayBuffer(4));
  const colors = readColors(header, n, (field, raw) => (i) => {
    const v = value(i, field);
    if (!raw || field.type !== 'F') return v >>> 0;
    scratch.setFloat32(0, v, true); // a float-typed rgb printed as a float: recover its bits
    return scratch.getUint32(0, true);
  });
  return { width: header.width, height: header.height, positions, colors };
}

/** Parses a whole PCD file. Throws PcdError naming the header key or data section that is wrong. */
export function readPcd(bytes: Uint8Array): PointCloud {
  const header = parsePcdHeader(bytes);
  const [x, y, z] = ['x', 'y', 'z'].map((name) => findField(header, name));
  if (!x || !y || !z) throw new PcdError(`PCD header FIELDS ${header.fields.map((f) => f.name).join(' ')}: must include x, y and z`);
  return header.encoding === 'ascii' ? readAscii(bytes, header, x, y, z) : readBinary(bytes, header, x, y, z);
}
