// Decodes PNG (fast-png) and JPEG (jpeg-js) into 8-bit RGB, the way Pillow's convert("RGB") does for the
// trainer: grey is repeated into the three channels, alpha is dropped (not blended), 16-bit samples keep
// their high byte, palette entries are looked up.
import { decode as decodePng } from 'fast-png';
import jpeg from 'jpeg-js';
import { invalidArgument } from '../../../plugins/errors.js';

export const PNG_MIME = 'image/png';
export const JPEG_MIME = 'image/jpeg';

export interface RgbImage {
  width: number;
  height: number;
  /** Row-major, 3 bytes per pixel. */
  rgb: Uint8Array;
}

/** 'image/png' or 'image/jpeg' from the first bytes, or undefined. */
export function sniffMime(data: Uint8Array): string | undefined {
  if (data.length >= 8 && data[0] === 0x89 && data[1] === 0x50 && data[2] === 0x4e && data[3] === 0x47) return PNG_MIME;
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return JPEG_MIME;
  return undefined;
}

/** Decodes an encoded image; `field` names the request field in errors. */
export function decodeRgb(data: Uint8Array, mimeType: string, field = 'image'): RgbImage {
  const mime = mimeType || sniffMime(data);
  if (data.length === 0) throw invalidArgument(`${field}: is empty`);
  if (mime === PNG_MIME) return pngToRgb(data, field);
  if (mime === JPEG_MIME) return jpegToRgb(data, field);
  throw invalidArgument(`mime_type ${JSON.stringify(mimeType)}: must be ${PNG_MIME} or ${JPEG_MIME} (or empty with PNG or JPEG bytes)`);
}

function pngToRgb(data: Uint8Array, field: string): RgbImage {
  let png;
  try {
    png = decodePng(data);
  } catch (err) {
    throw invalidArgument(`${field}: not a PNG image (${(err as Error).message})`);
  }
  const { width, height, channels, depth } = png;
  const rgb = new Uint8Array(width * height * 3);
  if (png.palette) {
    const bitsPer = depth;
    const rowBytes = Math.ceil((width * bitsPer) / 8);
    const src = png.data as Uint8Array;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const bit = x * bitsPer;
        const index = bitsPer === 8 ? src[y * width + x] : (src[y * rowBytes + (bit >> 3)] >> (8 - bitsPer - (bit & 7))) & ((1 << bitsPer) - 1);
        const colour = png.palette[index] ?? [0, 0, 0];
        rgb.set([colour[0], colour[1], colour[2]], (y * width + x) * 3);
      }
    }
    return { width, height, rgb };
  }
  const src = png.data;
  const shift = depth === 16 ? 8 : 0;
  const grey = channels < 3;
  for (let i = 0; i < width * height; i++) {
    const base = i * channels;
    for (let c = 0; c < 3; c++) rgb[i * 3 + c] = src[base + (grey ? 0 : c)] >> shift;
  }
  return { width, height, rgb };
}

function jpegToRgb(data: Uint8Array, field: string): RgbImage {
  try {
    const image = jpeg.decode(data, { useTArray: true, formatAsRGBA: false, maxMemoryUsageInMB: 1024 });
    return { width: image.width, height: image.height, rgb: image.data };
  } catch (err) {
    throw invalidArgument(`${field}: not a JPEG image (${(err as Error).message ?? err})`);
  }
}
