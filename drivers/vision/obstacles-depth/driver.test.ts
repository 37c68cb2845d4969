// The driver without the runtime: results are handed back as transfers of buffers they own.
import test from 'ava';
import type { Camera, PointCloud } from '../../../plugins/apis/camera.js';
import type { VisionObject } from '../../../plugins/apis/vision.js';
import type { DriverContext } from '../../../plugins/driver.js';
import { isTransfer, unwrapTransfer } from '../../../plugins/transfer.js';
import fakeCamera from '../../camera/fake/driver.js';
import { fakeCameraAttributes } from '../../camera/fake/model.js';
import { decodeDepthPng } from '../../camera/depth/depth-png.js';
import { readPcd } from '../../../plugins/formats/pcd/pcd-reader.js';
import { parseObstaclesDepthAttributes, type ObstaclesDepthAttributes } from './attributes.js';
import obstaclesDepth from './driver.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const context = <A>(attributes: A, deps: Record<string, unknown> = {}): DriverContext<A> => ({
  name: 'x',
  api: 'a',
  model: 'm',
  attributes,
  logger,
  // get(api, name) or the older get(name): the name is the last argument.
  dependencies: { get: ((...args: string[]) => deps[args[args.length - 1]]) as never, names: () => Object.keys(deps) },
});

test('the fake camera hands its cloud over as a transfer of the positions and colours buffers', async (t) => {
  const camera = (await fakeCamera(context(fakeCameraAttributes.parse({ width_px: 64, height_px: 48 })))) as Camera;
  const result = await camera.getPointCloud();
  t.true(isTransfer(result));
  const { value, buffers } = unwrapTransfer(result);
  const cloud = value as PointCloud;
  t.deepEqual(buffers, [cloud.positions.buffer, cloud.colors!.buffer]);
  t.is(cloud.positions.buffer.byteLength, 64 * 48 * 3 * 4, 'the buffer holds this cloud only');
  const pcd = unwrapTransfer(await camera.getPointCloudPcd());
  t.is((pcd.value as Uint8Array).buffer, pcd.buffers[0]);
  t.is(readPcd(pcd.value as Uint8Array).width, 64);
});

test('obstacles_depth returns its objects as a transfer of their PCD buffers, one per object', async (t) => {
  const camera = (await fakeCamera(context(fakeCameraAttributes.parse({})))) as Camera;
  let served = 0;
  const proxy = {
    getProperties: async () => camera.getProperties(),
    getPointCloud: async () => {
      served++;
      return unwrapTransfer(await camera.getPointCloud()).value;
    },
  };
  const attrs: ObstaclesDepthAttributes = parseObstaclesDepthAttributes({ camera_name: 'cam' });
  const vision = await obstaclesDepth(context(attrs, { cam: proxy }));
  const result = await vision.getObjectPointClouds('');
  t.is(served, 1);
  t.true(isTransfer(result));
  const { value, buffers } = unwrapTransfer(result);
  const objects = value as VisionObject[];
  t.is(objects.length, 2);
  t.deepEqual(
    buffers,
    objects.map((o) => o.pointCloud.buffer),
  );
  for (const o of objects) {
    t.is(o.pointCloud.byteOffset, 0);
    t.is(o.pointCloud.buffer.byteLength, o.pointCloud.byteLength);
    t.is(o.referenceFrame, 'cam');
    t.is(o.label, 'cam');
  }
  await t.throwsAsync(async () => vision.getObjectPointClouds('other'), { message: /camera_name "other": this obstacles_depth service segments camera "cam"/ });
  t.throws(() => vision.doCommand!({ nonsense: 1 }) as never, { message: /must contain attributes: true or last_frame: true, got nonsense/ });
});

test('a camera without point clouds: its depth image is projected through its intrinsics', async (t) => {
  const camera = (await fakeCamera(context(fakeCameraAttributes.parse({})))) as Camera;
  const depthOnly = (intrinsics: boolean) => ({
    getProperties: async () => ({
      ...(await camera.getProperties()),
      supportsPcd: false,
      intrinsics: intrinsics ? (await camera.getProperties()).intrinsics : undefined,
    }),
    getImage: async (mime: string) => camera.getImage(mime),
    getPointCloud: async () => {
      throw new Error('no point clouds here');
    },
  });
  const attrs = parseObstaclesDepthAttributes({ camera_name: 'cam' });
  const withIntrinsics = await obstaclesDepth(context(attrs, { cam: depthOnly(true) }));
  t.is((unwrapTransfer(await withIntrinsics.getObjectPointClouds('')).value as VisionObject[]).length, 2);

  // Without intrinsics there is no geometry: one object at the median depth, on the optical axis.
  const blind = await obstaclesDepth(context(attrs, { cam: depthOnly(false) }));
  const objects = unwrapTransfer(await blind.getObjectPointClouds('')).value as VisionObject[];
  t.is(objects.length, 1);
  const map = decodeDepthPng((await camera.getImage('')).data);
  const depths = Array.from(map.depth.filter((d) => d > 0)).sort((a, b) => a - b);
  t.true(Math.abs(objects[0].center[2] - depths[depths.length >> 1]) < 30, `${objects[0].center}`);
  t.deepEqual(objects[0].center.slice(0, 2), [0, 0]);
  t.deepEqual(objects[0].dims, [0, 0, 0]);
  t.is(readPcd(objects[0].pointCloud).width, 1);
});
