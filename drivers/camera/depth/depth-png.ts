// Depth maps travel as 16-bit greyscale PNG, one millimetre per unit (the convention of depth cameras
// such as RealSense and of the reference platform's depth MIME type).
import { decode, encode } from 'fast-png';
import type { DepthMap } from './projection.js';

export const DEPTH_PNG_MIME = 'image/png';

export function encodeDepthPng(map: DepthMap): Uint8Array {
  return encode({ width: map.width, height: map.height, data: map.depth, depth: 16, channels: 1 });
}

export class DepthPngError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DepthPngError';
  }
}

export function decodeDepthPng(bytes: Uint8Array): DepthMap {
  const png = decode(bytes);
  if (png.depth !== 16 || png.channels !== 1) {
    throw new DepthPngError(`depth PNG: must be 16-bit greyscale, got ${png.depth}-bit with ${png.channels} channel(s)`);
  }
  return { width: png.width, height: png.height, depth: new Uint16Array(png.data as Uint16Array) };
}
