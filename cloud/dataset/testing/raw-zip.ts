// Builds zips byte by byte for tests, including what no well-behaved zip library writes: ../ paths,
// symbolic links, and entries whose declared size lies (zip bombs).
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface RawEntry {
  name: string;
  data?: Uint8Array;
  /** Unix mode (file type and permissions); 0o100644 when absent. */
  mode?: number;
  deflate?: boolean;
  /** Already-deflated data with its real uncompressed size and CRC (for bombs built without the bytes). */
  raw?: { compressed: Buffer; size: number; crc: number };
  /** Overrides the uncompressed size written in the headers (a lie). */
  declaredSize?: number;
}

export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const data = Buffer.from(e.data ?? new Uint8Array());
    const compressed = e.raw?.compressed ?? (e.deflate ? deflateRawSync(data) : data);
    const method = e.raw || e.deflate ? 8 : 0;
    const crc = e.raw?.crc ?? crc32(data);
    const size = e.declaredSize ?? e.raw?.size ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(Math.min(size, 0xffffffff), 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(Math.min(size, 0xffffffff), 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/**
 * A real deflate stream of `gib` GiB of zeros, made without holding them: one 64 MiB block flushed to a
 * byte boundary, repeated (its back-references only reach zeros), then an empty final block.
 */
export function zeroBomb(gib: number): { compressed: Buffer; size: number; crc: number } {
  const block = Buffer.alloc(64 * 2 ** 20);
  const segment = deflateRawSync(block, { finishFlush: constants.Z_SYNC_FLUSH, level: 9 });
  const repeats = gib * 16;
  let crc = 0;
  for (let i = 0; i < repeats; i++) crc = crc32(block, crc);
  return { compressed: Buffer.concat([...Array.from({ length: repeats }, () => segment), Buffer.from([0x03, 0x00])]), size: repeats * block.length, crc };
}
