import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Camera, PointCloud } from '../../../plugins/apis/camera.js';
import { unwrapTransfer } from '../../../plugins/transfer.js';
import { writePcd } from '../../../plugins/formats/pcd/pcd-writer.js';
import pcdFile from './driver.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const open = (path: string) =>
  pcdFile({
    name: 'c',
    api: 'core:component:camera',
    model: 'pcd_file',
    attributes: { path },
    logger,
    dependencies: {
      get: () => {
        throw new Error('none');
      },
      names: () => [],
    },
  }) as Promise<Camera>;

const dir = mkdtempSync(join(tmpdir(), 'pcd-file-'));
const flat: PointCloud = { width: 3, height: 1, positions: Float32Array.of(0, 0, 1000, 10, 0, 1000, 20, 0, 1000) };

test('an unorganized file: points served, no image, no intrinsics', async (t) => {
  const path = join(dir, 'flat.pcd');
  writeFileSync(path, writePcd(flat, { encoding: 'ascii' }));
  const camera = await open(path);
  const cloud = unwrapTransfer(await camera.getPointCloud()).value as PointCloud;
  t.deepEqual(Array.from(cloud.positions), Array.from(flat.positions));
  const props = await camera.getProperties();
  t.deepEqual(props, { supportsPcd: true, intrinsics: undefined, mimeTypes: [] });
  t.throws(() => camera.getImage('') as never, { message: /is unorganized \(height 1\), so it has no image/ });
});

test('each call gets its own copy, so transferring it leaves the camera its cloud', async (t) => {
  const path = join(dir, 'copy.pcd');
  writeFileSync(path, writePcd(flat));
  const camera = await open(path);
  const a = unwrapTransfer(await camera.getPointCloud()).value as PointCloud;
  const b = unwrapTransfer(await camera.getPointCloud()).value as PointCloud;
  t.not(a.positions.buffer, b.positions.buffer);
  structuredClone(a.positions.buffer, { transfer: [a.positions.buffer as ArrayBuffer] }); // detaches a
  t.is((unwrapTransfer(await camera.getPointCloud()).value as PointCloud).positions[5], 1000);
});

test('reload re-reads the file; a missing or corrupt file fails with the path and the reason', async (t) => {
  const path = join(dir, 'reload.pcd');
  writeFileSync(path, writePcd(flat));
  const camera = await open(path);
  writeFileSync(path, writePcd({ width: 1, height: 1, positions: Float32Array.of(1, 2, 3) }));
  t.deepEqual(await camera.doCommand!({ reload: true }), { width: 1, height: 1 });
  await t.throwsAsync(async () => camera.doCommand!({ other: 1 }), { message: /must contain reload: true, got other/ });
  await t.throwsAsync(open(join(dir, 'missing.pcd')), { message: /missing\.pcd": cannot be read/ });
  const corrupt = join(dir, 'corrupt.pcd');
  writeFileSync(corrupt, 'VERSION 0.7\nFIELDS x y\nSIZE 4 4\nTYPE F F\nWIDTH 1\nHEIGHT 1\nDATA ascii\n1 2\n');
  await t.throwsAsync(open(corrupt), { message: /not a valid PCD file: PCD header FIELDS x y: must include x, y and z/ });
});
