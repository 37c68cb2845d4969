// A depth image (16-bit grey PNG, millimetres) in colour: the browser shows such a PNG through its top
// 8 bits, so a scene within a few metres is almost black. Each pixel's depth is mapped from the frame's
// nearest to its farthest (0 = no depth stays black) onto the turbo colour map: red near, blue far.
// Loaded on demand (import()) with its PNG decoder, only when a camera sends depth.
import { decode } from 'fast-png';

/** Google's turbo colour map, polynomial approximation; t in [0, 1]. */
function turbo(t: number): [number, number, number] {
  const r = 34.61 + t * (1172.33 - t * (10793.56 - t * (33300.12 - t * (38394.49 - t * 14825.05))));
  const g = 23.31 + t * (557.33 + t * (1225.33 - t * (3574.96 - t * (1073.77 + t * 707.56))));
  const b = 27.2 + t * (3211.1 - t * (15327.97 - t * (27814.0 - t * (22569.18 - t * 6838.66))));
  const c = (v: number) => Math.max(0, Math.min(255, Math.round(v)));
  return [c(r), c(g), c(b)];
}

export interface ColouredDepth {
  png: Blob;
  nearMm: number;
  farMm: number;
}

export async function colourDepth(bytes: Uint8Array): Promise<ColouredDepth | undefined> {
  const image = decode(bytes);
  if (image.depth !== 16 || image.channels !== 1) return undefined;
  const depth = image.data as Uint16Array;
  let [near, far] = [Infinity, 0];
  for (const d of depth) {
    if (d === 0) continue;
    if (d < near) near = d;
    if (d > far) far = d;
  }
  const rgba = new Uint8ClampedArray(image.width * image.height * 4);
  const span = far - near || 1;
  for (let i = 0; i < depth.length; i++) {
    const [r, g, b] = depth[i] === 0 ? [0, 0, 0] : turbo(1 - (depth[i] - near) / span);
    rgba.set([r, g, b, 255], i * 4);
  }
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [image.width, image.height];
  canvas.getContext('2d')!.putImageData(new ImageData(rgba, image.width, image.height), 0, 0);
  const png = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  return png ? { png, nearMm: near === Infinity ? 0 : near, farMm: far } : undefined;
}
