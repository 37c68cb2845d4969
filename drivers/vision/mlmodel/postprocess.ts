// From model outputs to answers, as the trainer reads them (python/platform_training/detect.py
// `detections` and classify.py): classifications are the labels' probabilities, most confident first;
// detections take each cell's best class, drop scores under the threshold and run non-maximum suppression
// per class at IoU 0.5 (torchvision's batched_nms), then scale the normalized boxes to the image's pixels.
import type { Classification, Detection } from '../../../plugins/apis/vision.js';

export interface Thresholds {
  /** Minimum confidence of a label without its own. */
  fallback: number;
  /** Per-label minimum confidence. */
  byLabel: Record<string, number>;
}

const threshold = (t: Thresholds, label: string) => t.byLabel[label] ?? t.fallback;

/** Classifications of one image from its probabilities row, most confident first, at most n (0: all). */
export function classify(probabilities: Float32Array, labels: string[], n: number, t: Thresholds): Classification[] {
  const found: Classification[] = [];
  probabilities.forEach((p, k) => {
    const className = labels[k] ?? String(k);
    if (p >= threshold(t, className)) found.push({ className, confidence: p });
  });
  found.sort((a, b) => b.confidence - a.confidence);
  return n > 0 ? found.slice(0, n) : found;
}

function iou(a: Float32Array, i: number, j: number): number {
  const w = Math.max(0, Math.min(a[i + 2], a[j + 2]) - Math.max(a[i], a[j]));
  const h = Math.max(0, Math.min(a[i + 3], a[j + 3]) - Math.max(a[i + 1], a[j + 1]));
  const inter = w * h;
  const union = (a[i + 2] - a[i]) * (a[i + 3] - a[i + 1]) + (a[j + 2] - a[j]) * (a[j + 3] - a[j + 1]) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Detections of one image. boxes: [cells, 4] normalized x_min, y_min, x_max, y_max; scores: [cells,
 * labels]. A box is suppressed by a higher-scoring one of its class whose IoU with it is above 0.5.
 */
export function detect(
  boxes: Float32Array,
  scores: Float32Array,
  labels: number,
  names: string[],
  width: number,
  height: number,
  t: Thresholds,
  nmsIou = 0.5,
): Detection[] {
  const cells = boxes.length / 4;
  const candidates: { cell: number; score: number; cls: number }[] = [];
  for (let cell = 0; cell < cells; cell++) {
    let cls = 0;
    for (let k = 1; k < labels; k++) if (scores[cell * labels + k] > scores[cell * labels + cls]) cls = k;
    const score = scores[cell * labels + cls];
    if (score >= threshold(t, names[cls] ?? String(cls))) candidates.push({ cell, score, cls });
  }
  candidates.sort((a, b) => b.score - a.score);
  const kept: typeof candidates = [];
  for (const c of candidates) {
    if (kept.some((k) => k.cls === c.cls && iou(boxes, k.cell * 4, c.cell * 4) > nmsIou)) continue;
    kept.push(c);
  }
  return kept.map(({ cell, score, cls }) => ({
    xMin: boxes[cell * 4] * width,
    yMin: boxes[cell * 4 + 1] * height,
    xMax: boxes[cell * 4 + 2] * width,
    yMax: boxes[cell * 4 + 3] * height,
    confidence: score,
    className: names[cls] ?? String(cls),
  }));
}
