// Colour images as 8-bit RGB PNG, from the packed 0xAARRGGBB colours of an organized cloud.
import { encode } from 'fast-png';

export function encodeColorPng(width: number, height: number, colors: Uint32Array): Uint8Array {
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const c = colors[i];
    rgb[i * 3] = (c >>> 16) & 0xff;
    rgb[i * 3 + 1] = (c >>> 8) & 0xff;
    rgb[i * 3 + 2] = c & 0xff;
  }
  return encode({ width, height, data: rgb, depth: 8, channels: 3 });
}
