// Synthetic labelled images for tests and benchmarks: coloured squares and discs on a grey, noisy
// background. Each image knows its colour labels and the normalized box of every shape.
import { encode } from 'fast-png';

export const shapeColours = { red: [220, 40, 40], green: [40, 190, 60], blue: [40, 70, 220] } as const;
export type ShapeColour = keyof typeof shapeColours;

export interface ShapeObject {
  label: ShapeColour;
  /** x_min, y_min, x_max, y_max, normalized to [0, 1]. */
  box: [number, number, number, number];
}

export interface ShapeImage {
  png: Uint8Array;
  labels: ShapeColour[];
  objects: ShapeObject[];
}

export interface ShapeOptions {
  size?: number;
  seed?: number;
  /** Shapes per image: 1..maxObjects (non-overlapping). Default 1. */
  maxObjects?: number;
  colours?: ShapeColour[];
}

/** mulberry32: a small seeded generator, so every run builds the same images. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shapeImages(count: number, options: ShapeOptions = {}): ShapeImage[] {
  const size = options.size ?? 64;
  const rnd = random(options.seed ?? 1);
  const colours = options.colours ?? (Object.keys(shapeColours) as ShapeColour[]);
  const images: ShapeImage[] = [];
  for (let n = 0; n < count; n++) {
    const data = new Uint8Array(size * size * 3);
    const grey = 90 + Math.floor(rnd() * 70);
    for (let i = 0; i < data.length; i++) data[i] = Math.max(0, Math.min(255, grey + Math.floor((rnd() - 0.5) * 30)));
    const wanted = 1 + Math.floor(rnd() * (options.maxObjects ?? 1));
    const objects: ShapeObject[] = [];
    // Each image cycles through the colours for its first shape, so every label is well represented.
    for (let attempt = 0; objects.length < wanted && attempt < 20; attempt++) {
      const label = objects.length === 0 ? colours[n % colours.length] : colours[Math.floor(rnd() * colours.length)];
      const side = Math.round(size * (0.22 + rnd() * 0.22));
      const x = Math.floor(rnd() * (size - side));
      const y = Math.floor(rnd() * (size - side));
      const overlaps = objects.some(({ box }) => !(x + side < box[0] * size || x > box[2] * size || y + side < box[1] * size || y > box[3] * size));
      if (overlaps) continue;
      const disc = rnd() < 0.5;
      const [r, g, b] = shapeColours[label];
      for (let py = y; py < y + side; py++) {
        for (let px = x; px < x + side; px++) {
          const dx = px - x - side / 2 + 0.5;
          const dy = py - y - side / 2 + 0.5;
          if (disc && dx * dx + dy * dy > (side / 2) ** 2) continue;
          const at = (py * size + px) * 3;
          data[at] = r;
          data[at + 1] = g;
          data[at + 2] = b;
        }
      }
      objects.push({ label, box: [x / size, y / size, (x + side) / size, (y + side) / size] });
    }
    const labels = [...new Set(objects.map((o) => o.label))].sort();
    images.push({ png: encode({ width: size, height: size, data, channels: 3, depth: 8 }), labels, objects });
  }
  return images;
}
