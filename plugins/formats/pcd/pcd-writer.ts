// Writes the runtime's PointCloud (millimetres) as a PCD v0.7 file in metres, the way PCL writes it:
// fields x y z (float32) and, when the cloud has colour, rgb as float-typed packed bytes (binary) or an
// unsigned integer (ascii, where printing a float would lose the bits).
import { lzfCompress } from './lzf.js';
import type { PcdEncoding } from './pcd-header.js';
import type { PointCloud } from '../../apis/camera.js';

const M_PER_MM = 0.001;

export interface PcdWriteOptions {
  /** Default binary: compact and exact. */
  encoding?: PcdEncoding;
}

function header(cloud: PointCloud, encoding: PcdEncoding): string {
  const color = cloud.colors !== undefined;
  const rgbType = encoding === 'ascii' ? 'U' : 'F';
  return [
    '# .PCD v0.7 - Point Cloud Data file format',
    'VERSION 0.7',
    `FIELDS x y z${color ? ' rgb' : ''}`,
    `SIZE 4 4 4${color ? ' 4' : ''}`,
    `TYPE F F F${color ? ` ${rgbType}` : ''}`,
    `COUNT 1 1 1${color ? ' 1' : ''}`,
    `WIDTH ${cloud.width}`,
    `HEIGHT ${cloud.height}`,
    'VIEWPOINT 0 0 0 1 0 0 0',
    `POINTS ${cloud.width * cloud.height}`,
    `DATA ${encoding}`,
    '',
  ].join('\n');
}

export function writePcd(cloud: PointCloud, options: PcdWriteOptions = {}): Buffer {
  const encoding = options.encoding ?? 'binary';
  const n = cloud.width * cloud.height;
  const head = Buffer.from(header(cloud, encoding), 'latin1');
  const p = cloud.positions;
  const colors = cloud.colors;
  if (encoding === 'ascii') {
    const lines: string[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const o = i * 3;
      const xyz = `${fmt(p[o])} ${fmt(p[o + 1])} ${fmt(p[o + 2])}`;
      lines[i] = colors ? `${xyz} ${colors[i] >>> 0}` : xyz;
    }
    return join([head, Buffer.from(lines.join('\n') + (n ? '\n' : ''), 'latin1')]);
  }
  const fieldsPerPoint = colors ? 4 : 3;
  const raw = new ArrayBuffer(n * fieldsPerPoint * 4);
  const f32 = new Float32Array(raw);
  const u32 = new Uint32Array(raw);
  if (encoding === 'binary') {
    for (let i = 0; i < n; i++) {
      const o = i * fieldsPerPoint;
      f32[o] = p[i * 3] * M_PER_MM;
      f32[o + 1] = p[i * 3 + 1] * M_PER_MM;
      f32[o + 2] = p[i * 3 + 2] * M_PER_MM;
      if (colors) u32[o + 3] = colors[i];
    }
    return join([head, new Uint8Array(raw)]);
  }
  // binary_compressed: one field after another, then LZF.
  for (let i = 0; i < n; i++) {
    f32[i] = p[i * 3] * M_PER_MM;
    f32[n + i] = p[i * 3 + 1] * M_PER_MM;
    f32[2 * n + i] = p[i * 3 + 2] * M_PER_MM;
    if (colors) u32[3 * n + i] = colors[i];
  }
  const packed = lzfCompress(new Uint8Array(raw));
  const sizes = Buffer.alloc(8);
  sizes.writeUInt32LE(packed.length, 0);
  sizes.writeUInt32LE(raw.byteLength, 4);
  return join([head, sizes, packed]);
}

/** Shortest decimal that reads back as the same float32 (ascii PCD is read into float32). */
function fmt(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  const f = Math.fround(v * M_PER_MM);
  for (let digits = 6; digits < 9; digits++) {
    const text = f.toPrecision(digits);
    if (Math.fround(Number(text)) === f) return String(Number(text));
  }
  return String(Number(f.toPrecision(9)));
}

/** Concatenates into a buffer of its own (never Node's shared pool), so it can be transferred between threads. */
function join(parts: Uint8Array[]): Buffer {
  const out = Buffer.alloc(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
