// The trainer's reading of detector outputs: best class per cell, threshold, per-class NMS at IoU 0.5,
// boxes scaled to pixels; and classifications sorted, thresholded and cut to n.
import test from 'ava';
import { classify, detect } from './postprocess.js';

test('classifications: most confident first, per-label and default thresholds, at most n', (t) => {
  const p = Float32Array.of(0.1, 0.6, 0.3);
  const labels = ['red', 'green', 'blue'];
  t.deepEqual(
    classify(p, labels, 0, { fallback: 0, byLabel: {} }).map((c) => c.className),
    ['green', 'blue', 'red'],
  );
  t.deepEqual(
    classify(p, labels, 1, { fallback: 0, byLabel: {} }).map((c) => c.className),
    ['green'],
  );
  t.deepEqual(
    classify(p, labels, 0, { fallback: 0.2, byLabel: { blue: 0.5 } }).map((c) => c.className),
    ['green'],
  );
  t.deepEqual(
    classify(p, [], 1, { fallback: 0, byLabel: {} }).map((c) => c.className),
    ['1'],
    'without labels the index names the class',
  );
});

test('detections: overlapping boxes of one class collapse to the best; other classes and far boxes stay', (t) => {
  // Four cells, two labels.
  const boxes = Float32Array.of(
    0.1,
    0.1,
    0.5,
    0.5, // a: best red
    0.12,
    0.1,
    0.52,
    0.5, // overlaps a (IoU > 0.5), red, lower: suppressed
    0.11,
    0.1,
    0.5,
    0.5, // overlaps a but blue: kept
    0.6,
    0.6,
    0.9,
    0.9, // far away red, score under the threshold: dropped
  );
  const scores = Float32Array.of(0.9, 0.05, 0.8, 0.1, 0.1, 0.7, 0.04, 0.01);
  const found = detect(boxes, scores, 2, ['red', 'blue'], 200, 100, { fallback: 0.05, byLabel: {} });
  t.deepEqual(
    found.map((d) => [d.className, d.confidence.toFixed(2)]),
    [
      ['red', '0.90'],
      ['blue', '0.70'],
    ],
  );
  t.deepEqual(
    [found[0].xMin, found[0].yMin, found[0].xMax, found[0].yMax].map((v) => Math.round(v * 100) / 100),
    [20, 10, 100, 50],
  );
  t.is(detect(boxes, scores, 2, ['red', 'blue'], 200, 100, { fallback: 0.05, byLabel: { blue: 0.75 } }).length, 1);
});
