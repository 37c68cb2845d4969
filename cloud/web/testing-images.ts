// Test images: noisy, so they compress badly and their full content is far larger than any thumbnail
// (a grid that downloaded content would show in the byte counts).
import { encode as encodePng } from 'fast-png';
import { encode as encodeJpeg } from 'jpeg-js';

function noisyRgba(width: number, height: number, seed = 1): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  let s = seed;
  for (let i = 0; i < data.length; i += 4) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const x = (i / 4) % width;
    data[i] = (x * 255) / width;
    data[i + 1] = (s >> 16) & 0xff;
    data[i + 2] = (s >> 8) & 0xff;
    data[i + 3] = 255;
  }
  return data;
}

export function noisyPng(width: number, height: number, seed = 1): Uint8Array {
  return encodePng({ width, height, data: noisyRgba(width, height, seed), channels: 4, depth: 8 });
}

export function noisyJpeg(width: number, height: number, seed = 1): Uint8Array {
  return encodeJpeg({ width, height, data: noisyRgba(width, height, seed) }, 95).data;
}
