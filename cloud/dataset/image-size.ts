// The pixel size of an image, read from its header without decoding it: COCO needs it to turn
// normalised boxes into pixels, and an import checks boxes against it. PNG (IHDR), JPEG (the first
// SOFn marker), GIF, BMP and WebP (VP8, VP8L, VP8X).
export interface ImageSize {
  width: number;
  height: number;
}

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function png(b: Buffer): ImageSize | undefined {
  if (b.length < 24 || !pngSignature.every((v, i) => b[i] === v) || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** Start-of-frame markers: C0-CF except C4 (DHT), C8 (JPG extension) and CC (DAC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function jpeg(b: Buffer): ImageSize | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    if (isSof(marker)) return at + 9 <= b.length ? { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) } : undefined;
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan data before any frame header
    at += 2 + length;
  }
  return undefined;
}

function gif(b: Buffer): ImageSize | undefined {
  if (b.length < 10 || !['GIF87a', 'GIF89a'].includes(b.toString('latin1', 0, 6))) return undefined;
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function bmp(b: Buffer): ImageSize | undefined {
  if (b.length < 26 || b.toString('latin1', 0, 2) !== 'BM') return undefined;
  return { width: Math.abs(b.readInt32LE(18)), height: Math.abs(b.readInt32LE(22)) };
}

function webp(b: Buffer): ImageSize | undefined {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return undefined;
}

/** The image's size, or undefined when the bytes are not an image of a known kind (or are cut short). */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = png(b) ?? jpeg(b) ?? gif(b) ?? bmp(b) ?? webp(b);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}
