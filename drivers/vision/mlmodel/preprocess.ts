// The image as the trainer feeds it to the model (python/platform_training/data.py load_image):
// Pillow's resize((size, size), BILINEAR) of the RGB image, then float32 in [0, 1], channels first; then
// the service's optional (x - mean) / std.
//
// The resize is Pillow's algorithm, not a textbook bilinear one: when shrinking, its triangle filter
// widens with the scale (an area average), and each pass (horizontal, then vertical) rounds to 8 bits with
// 22-bit fixed-point weights. Doing the same here gives the same bytes as the trainer saw.
import type { RgbImage } from '../../camera/image-decode/rgb-image.js';

const PRECISION_BITS = 32 - 8 - 2;
const ONE = 2 ** PRECISION_BITS;

interface Coefficients {
  bounds: Int32Array; // per output pixel: first input index, count
  weights: Float64Array; // ksize per output pixel, fixed point
  ksize: number;
}

function coefficients(inSize: number, outSize: number): Coefficients {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1);
  const support = 1 * filterscale; // bilinear support is 1
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const weights = new Float64Array(outSize * ksize);
  const k = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1 / filterscale;
    // Pillow truncates toward zero here ((int) casts of non-negative values).
    const xmin = Math.max(Math.trunc(center - support + 0.5), 0);
    const count = Math.min(Math.trunc(center + support + 0.5), inSize) - xmin;
    let ww = 0;
    for (let x = 0; x < count; x++) {
      const t = Math.abs((x + xmin - center + 0.5) * ss);
      const w = t < 1 ? 1 - t : 0;
      k[x] = w;
      ww += w;
    }
    for (let x = 0; x < count; x++) {
      const w = ww === 0 ? 0 : k[x] / ww;
      weights[xx * ksize + x] = w < 0 ? Math.trunc(-0.5 + w * ONE) : Math.trunc(0.5 + w * ONE);
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = count;
  }
  return { bounds, weights, ksize };
}

const clip8 = (ss: number) => {
  const v = Math.floor(ss / ONE);
  return v < 0 ? 0 : v > 255 ? 255 : v;
};

/** Pillow's Image.resize((width, height), Image.BILINEAR) of an RGB image. */
export function resizeBilinear(image: RgbImage, width: number, height: number): RgbImage {
  let current = image;
  if (current.width !== width) {
    const { bounds, weights, ksize } = coefficients(current.width, width);
    const out = new Uint8Array(width * current.height * 3);
    for (let y = 0; y < current.height; y++) {
      const row = y * current.width * 3;
      for (let xx = 0; xx < width; xx++) {
        const xmin = bounds[xx * 2];
        const count = bounds[xx * 2 + 1];
        for (let c = 0; c < 3; c++) {
          let ss = ONE / 2;
          for (let x = 0; x < count; x++) ss += current.rgb[row + (x + xmin) * 3 + c] * weights[xx * ksize + x];
          out[(y * width + xx) * 3 + c] = clip8(ss);
        }
      }
    }
    current = { width, height: current.height, rgb: out };
  }
  if (current.height !== height) {
    const { bounds, weights, ksize } = coefficients(current.height, height);
    const out = new Uint8Array(width * height * 3);
    for (let yy = 0; yy < height; yy++) {
      const ymin = bounds[yy * 2];
      const count = bounds[yy * 2 + 1];
      for (let x = 0; x < width * 3; x++) {
        let ss = ONE / 2;
        for (let y = 0; y < count; y++) ss += current.rgb[(y + ymin) * width * 3 + x] * weights[yy * ksize + y];
        out[yy * width * 3 + x] = clip8(ss);
      }
    }
    current = { width, height, rgb: out };
  }
  return current;
}

export interface Normalisation {
  mean: [number, number, number];
  std: [number, number, number];
}

/** The model input: float32 [1, 3, height, width], (pixel / 255 - mean) / std per channel. */
export function toInputTensor(image: RgbImage, width: number, height: number, norm: Normalisation): Float32Array {
  const sized = resizeBilinear(image, width, height);
  const plane = width * height;
  const out = new Float32Array(3 * plane);
  const identity = norm.mean.every((m) => m === 0) && norm.std.every((s) => s === 1);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      // Math.fround(v / 255) is torch's float32 division of the byte by 255.
      const v = Math.fround(sized.rgb[i * 3 + c] / 255);
      out[c * plane + i] = identity ? v : (v - norm.mean[c]) / norm.std[c];
    }
  }
  return out;
}
