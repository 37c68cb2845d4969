// Runs a downloaded ONNX artefact in Node (onnxruntime-web, WASM) on fresh shape images, to check that
// the exported model is what training reported, not just a file.
import { decode } from 'fast-png';
import * as ort from 'onnxruntime-web';
import type { ShapeImage } from './shapes.js';

function toTensor(images: ShapeImage[], size: number): ort.Tensor {
  const data = new Float32Array(images.length * 3 * size * size);
  images.forEach((image, n) => {
    const png = decode(image.png);
    const plane = size * size;
    for (let i = 0; i < plane; i++) {
      for (let c = 0; c < 3; c++) data[n * 3 * plane + c * plane + i] = png.data[i * png.channels + c] / 255;
    }
  });
  return new ort.Tensor('float32', data, [images.length, 3, size, size]);
}

// onnxruntime-web's multi-threaded WASM starts worker threads that never come up under AVA's tsx
// loader; one thread is plenty for a few dozen 64x64 images.
ort.env.wasm.numThreads = 1;

export async function runOnnx(model: Uint8Array, images: ShapeImage[], size = 64): Promise<Record<string, { data: Float32Array; dims: readonly number[] }>> {
  const session = await ort.InferenceSession.create(model);
  const out = await session.run({ [session.inputNames[0]]: toTensor(images, size) });
  const result: Record<string, { data: Float32Array; dims: readonly number[] }> = {};
  for (const [name, tensor] of Object.entries(out)) result[name] = { data: tensor.data as Float32Array, dims: tensor.dims };
  await session.release();
  return result;
}

/** Fraction of images whose arg-max label is their single label. */
export function singleLabelAccuracy(probabilities: Float32Array, labels: string[], images: ShapeImage[]): number {
  let right = 0;
  images.forEach((image, n) => {
    const row = Array.from(probabilities.subarray(n * labels.length, (n + 1) * labels.length));
    if (labels[row.indexOf(Math.max(...row))] === image.labels[0]) right += 1;
  });
  return right / images.length;
}

/** Fraction of images whose thresholded label set equals their label set. */
export function multiLabelExactMatch(probabilities: Float32Array, labels: string[], images: ShapeImage[]): number {
  let right = 0;
  images.forEach((image, n) => {
    const predicted = labels.filter((_, k) => probabilities[n * labels.length + k] >= 0.5);
    if (predicted.join() === [...image.labels].sort().join()) right += 1;
  });
  return right / images.length;
}

const iou = (a: number[], b: number[]) => {
  const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
};

/** Fraction of shapes for which some detection of the right label scores >= 0.3 with IoU >= 0.5. */
export function detectionRecall(boxes: Float32Array, scores: Float32Array, dims: readonly number[], labels: string[], images: ShapeImage[]): number {
  const cells = dims[1];
  let found = 0;
  let total = 0;
  images.forEach((image, n) => {
    for (const object of image.objects) {
      total += 1;
      const k = labels.indexOf(object.label);
      for (let c = 0; c < cells; c++) {
        const score = scores[(n * cells + c) * labels.length + k];
        const box = Array.from(boxes.subarray((n * cells + c) * 4, (n * cells + c + 1) * 4));
        if (score >= 0.3 && iou(box, object.box) >= 0.5) {
          found += 1;
          break;
        }
      }
    }
  });
  return found / total;
}
