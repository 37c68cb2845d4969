// The PCD (Point Cloud Data, v0.7 and 0.6) header: fields, their binary layout, the grid and the encoding.

export class PcdError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PcdError';
  }
}

export type PcdType = 'I' | 'U' | 'F';
export type PcdEncoding = 'ascii' | 'binary' | 'binary_compressed';

export interface PcdField {
  name: string;
  size: number;
  type: PcdType;
  count: number;
  /** Byte offset of the field inside one point record of `DATA binary`. */
  offset: number;
}

export interface PcdHeader {
  version: string;
  fields: PcdField[];
  width: number;
  height: number;
  points: number;
  viewpoint: number[];
  encoding: PcdEncoding;
  /** Bytes per point record (sum of size * count). */
  pointSize: number;
  /** Offset of the first data byte in the file. */
  dataOffset: number;
}

const VALID_SIZES: Record<PcdType, number[]> = { I: [1, 2, 4, 8], U: [1, 2, 4, 8], F: [4, 8] };
const MAX_HEADER_BYTES = 64 * 1024;

function positiveInt(key: string, text: string | undefined, allowZero = false): number {
  const value = Number(text);
  if (text === undefined || !Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new PcdError(`PCD header ${key} ${JSON.stringify(text ?? '')}: must be ${allowZero ? 'a non-negative' : 'a positive'} integer`);
  }
  return value;
}

/** Finds and parses the header; the data section starts right after the line `DATA <encoding>`. */
export function parsePcdHeader(bytes: Uint8Array): PcdHeader {
  const entries = new Map<string, string[]>();
  let pos = 0;
  let dataOffset = -1;
  while (pos < bytes.length && pos < MAX_HEADER_BYTES) {
    let end = bytes.indexOf(0x0a, pos);
    if (end < 0) end = bytes.length;
    const line = Buffer.from(bytes.buffer, bytes.byteOffset + pos, end - pos)
      .toString('latin1')
      .trim();
    pos = end + 1;
    if (line === '' || line.startsWith('#')) continue;
    const [key, ...values] = line.split(/\s+/);
    entries.set(key.toUpperCase(), values);
    if (key.toUpperCase() === 'DATA') {
      dataOffset = Math.min(pos, bytes.length);
      break;
    }
  }
  if (dataOffset < 0) throw new PcdError('PCD header: no DATA line found (not a PCD file, or the header is truncated)');

  const names = entries.get('FIELDS') ?? entries.get('COLUMNS');
  if (!names || names.length === 0) throw new PcdError('PCD header FIELDS: required and must list at least one field');
  const sizes = entries.get('SIZE');
  const types = entries.get('TYPE');
  const counts = entries.get('COUNT') ?? names.map(() => '1');
  for (const [key, list] of [
    ['SIZE', sizes],
    ['TYPE', types],
    ['COUNT', counts],
  ] as const) {
    if (!list) throw new PcdError(`PCD header ${key}: required`);
    if (list.length !== names.length) throw new PcdError(`PCD header ${key}: has ${list.length} entries but FIELDS has ${names.length}`);
  }
  const fields: PcdField[] = [];
  let offset = 0;
  names.forEach((name, i) => {
    const type = types![i].toUpperCase() as PcdType;
    if (!(type in VALID_SIZES)) throw new PcdError(`PCD header TYPE ${JSON.stringify(types![i])} of field ${name}: must be I, U or F`);
    const size = positiveInt('SIZE', sizes![i]);
    if (!VALID_SIZES[type].includes(size)) throw new PcdError(`PCD header SIZE ${size} of field ${name}: type ${type} allows ${VALID_SIZES[type].join(', ')}`);
    const count = positiveInt('COUNT', counts[i]);
    fields.push({ name, size, type, count, offset });
    offset += size * count;
  });

  const width = positiveInt('WIDTH', entries.get('WIDTH')?.[0], true);
  const height = positiveInt('HEIGHT', entries.get('HEIGHT')?.[0] ?? '1', true);
  const pointsText = entries.get('POINTS')?.[0];
  const points = pointsText === undefined ? width * height : positiveInt('POINTS', pointsText, true);
  if (points !== width * height) throw new PcdError(`PCD header POINTS ${points}: must equal WIDTH x HEIGHT = ${width * height}`);
  const encoding = (entries.get('DATA')?.[0] ?? '').toLowerCase();
  if (encoding !== 'ascii' && encoding !== 'binary' && encoding !== 'binary_compressed') {
    throw new PcdError(`PCD header DATA ${JSON.stringify(encoding)}: must be ascii, binary or binary_compressed`);
  }
  const viewpoint = (entries.get('VIEWPOINT') ?? ['0', '0', '0', '1', '0', '0', '0']).map(Number);
  return {
    version: entries.get('VERSION')?.[0] ?? '0.7',
    fields,
    width,
    height,
    points,
    viewpoint,
    encoding,
    pointSize: offset,
    dataOffset,
  };
}
