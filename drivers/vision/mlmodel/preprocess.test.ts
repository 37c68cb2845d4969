// The model input this service builds is the trainer's, byte for byte: the trainer's own load_image
// (python/platform_training/data.py) runs on the same files and the tensors are compared.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'fast-png';
import jpeg from 'jpeg-js';
import { decodeRgb } from '../../camera/image-decode/rgb-image.js';
import { python } from '../../mlmodel/testing/tiny-onnx.js';
import { toInputTensor } from './preprocess.js';

const trainerDir = fileURLToPath(new URL('../../../cloud/mltraining/python', import.meta.url));

function noisy(width: number, height: number, channels: number): Uint8Array {
  const data = new Uint8Array(width * height * channels);
  let s = 7;
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = (s >>> 16) & 255;
  }
  return data;
}

/** The trainer's tensor for each file, as raw float32 bytes. */
function trainerTensors(files: string[], size: number): Buffer[] {
  const script = `
import sys
sys.path.insert(0, sys.argv[1])
from platform_training.data import load_image
size = int(sys.argv[2])
for path in sys.argv[3:]:
    with open(path + ".f32", "wb") as f:
        f.write(load_image(path, size).numpy().tobytes())
`;
  execFileSync(python, ['-c', script, trainerDir, String(size), ...files], { stdio: ['ignore', 'ignore', 'inherit'] });
  return files.map((f) => readFileSync(`${f}.f32`));
}

test("PNG images of any size, grey or with alpha, give the trainer's exact input tensor", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'preprocess-'));
  const cases = [
    { name: 'rgb-100x77.png', png: encode({ width: 100, height: 77, data: noisy(100, 77, 3), channels: 3, depth: 8 }) },
    { name: 'rgba-30x41.png', png: encode({ width: 30, height: 41, data: noisy(30, 41, 4), channels: 4, depth: 8 }) },
    { name: 'grey-64x64.png', png: encode({ width: 64, height: 64, data: noisy(64, 64, 1), channels: 1, depth: 8 }) },
    { name: 'rgb-64x64.png', png: encode({ width: 64, height: 64, data: noisy(64, 64, 3), channels: 3, depth: 8 }) },
  ];
  for (const c of cases) writeFileSync(join(dir, c.name), c.png);
  const expected = trainerTensors(
    cases.map((c) => join(dir, c.name)),
    64,
  );
  cases.forEach((c, i) => {
    const mine = toInputTensor(decodeRgb(c.png, ''), 64, 64, { mean: [0, 0, 0], std: [1, 1, 1] });
    t.true(Buffer.from(mine.buffer).equals(expected[i]), `${c.name} differs from the trainer's tensor`);
  });
});

test("JPEG images decode to within a few levels of the trainer's decoder (Pillow's libjpeg)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'preprocess-'));
  const rgba = new Uint8Array(80 * 60 * 4);
  for (let y = 0; y < 60; y++) for (let x = 0; x < 80; x++) rgba.set([x * 3, y * 4, 128, 255], (y * 80 + x) * 4);
  const file = join(dir, 'smooth.jpg');
  writeFileSync(file, jpeg.encode({ width: 80, height: 60, data: rgba }, 90).data);
  const [expected] = trainerTensors([file], 64);
  const theirs = new Float32Array(expected.buffer, expected.byteOffset, expected.byteLength / 4);
  const mine = toInputTensor(decodeRgb(readFileSync(file), 'image/jpeg'), 64, 64, { mean: [0, 0, 0], std: [1, 1, 1] });
  let worst = 0;
  mine.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - theirs[i]))));
  t.true(worst <= 3.5 / 255, `largest difference ${worst * 255} levels`);
});

test('mean and standard deviation apply per channel after scaling to [0, 1]', (t) => {
  const png = encode({ width: 1, height: 1, data: Uint8Array.of(255, 51, 0), channels: 3, depth: 8 });
  const out = toInputTensor(decodeRgb(png, 'image/png'), 1, 1, { mean: [0.5, 0.2, 0], std: [0.5, 0.1, 2] });
  t.deepEqual(
    Array.from(out).map((v) => Math.round(v * 1e5) / 1e5),
    [1, 0, 0],
  );
});
