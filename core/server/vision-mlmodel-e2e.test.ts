// The mlmodel vision service end to end: the real platform-server with an onnx_cpu service (a tiny
// classifier whose answer is the image's dominant colour channel), an image_file camera cycling through a
// folder, and the real VisionService client.
import test from 'ava';
import { status, type ServiceError } from '@grpc/grpc-js';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encode } from 'fast-png';
import jpeg from 'jpeg-js';
import {
  GetClassificationsFromCameraRequest,
  GetClassificationsRequest,
  GetDetectionsRequest,
  VisionServiceClient,
} from '../../gen/platform/service/vision/v1/vision.js';
import { CameraServiceClient } from '../../gen/platform/component/camera/v1/camera.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from './testing/spawn-runtime.js';
import { writeChannelMeansModel } from '../../drivers/mlmodel/testing/tiny-onnx.js';

const dir = mkdtempSync(join(tmpdir(), 'vision-mlmodel-'));
const folder = join(dir, 'images');
const colours = { red: [230, 20, 20], green: [20, 230, 20], blue: [20, 20, 230] } as const;

const classifyReq = GetClassificationsRequest.fromPartial;
const cameraReq = GetClassificationsFromCameraRequest.fromPartial;
const png = (rgb: readonly number[], width = 9, height = 7): Buffer =>
  Buffer.from(encode({ width, height, data: new Uint8Array(width * height * 3).map((_, i) => rgb[i % 3]), channels: 3, depth: 8 }));
const jpg = (rgb: readonly number[], width = 16, height = 16) =>
  jpeg.encode({ width, height, data: new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 : rgb[i % 4])) }, 95).data;

let runtime: SpawnedRuntime;
let vision: VisionServiceClient;
test.before(async () => {
  writeChannelMeansModel(join(dir, 'means.onnx'), 4);
  writeFileSync(join(dir, 'labels.txt'), 'red\ngreen\nblue\n');
  mkdirSync(folder);
  writeFileSync(join(folder, '1-blue.png'), png(colours.blue));
  writeFileSync(join(folder, '2-green.jpg'), jpg(colours.green));
  writeFileSync(join(folder, '3-red.png'), png(colours.red, 40, 30));
  runtime = await spawnRuntime({
    components: [
      { name: 'files', api: 'core:component:camera', model: 'image_file', attributes: { color_image_file_path: folder } },
      { name: 'one', api: 'core:component:camera', model: 'image_file', attributes: { color_image_file_path: join(folder, '2-green.jpg') } },
      { name: 'depth', api: 'core:component:camera', model: 'fake', attributes: {} },
    ],
    services: [
      {
        name: 'means',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: join(dir, 'means.onnx'), label_path: join(dir, 'labels.txt') },
      },
      {
        name: 'colours',
        api: 'core:service:vision',
        model: 'mlmodel',
        attributes: { mlmodel_name: 'means', camera_name: 'files', label_confidences: { green: 0.99 } },
      },
      {
        name: 'picky',
        api: 'core:service:vision',
        model: 'mlmodel',
        attributes: { mlmodel_name: 'means', camera_name: 'depth', default_minimum_confidence: 0.6 },
      },
      { name: 'wrong', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'files' } },
    ],
  });
  vision = new VisionServiceClient(runtime.address, insecure());
});
test.after.always(() => runtime?.stop());

test('GetClassifications on PNG and JPEG images: the dominant colour first, n limits, thresholds apply', async (t) => {
  const red = await call(
    vision,
    'getClassifications',
    classifyReq({ name: 'colours', image: png(colours.red), mimeType: 'image/png', width: 9, height: 7, n: 1 }),
  );
  t.deepEqual(
    red.classifications.map((c: { className: string }) => c.className),
    ['red'],
  );
  const blue = await call(vision, 'getClassifications', classifyReq({ name: 'colours', image: jpg(colours.blue), mimeType: '', n: 0 }));
  // green needs 0.99 (label_confidences), so only red and blue are listed, blue first.
  t.deepEqual(
    blue.classifications.map((c: { className: string }) => c.className),
    ['blue', 'red'],
  );
  const confidences = blue.classifications.map((c: { confidence: number }) => c.confidence);
  t.true(confidences[0] > confidences[1] && confidences[0] < 1);
  const picky = await call(vision, 'getClassifications', classifyReq({ name: 'picky', image: png(colours.red), n: 0 }));
  t.deepEqual(
    picky.classifications.map((c: { className: string }) => c.className),
    [],
    'no class reaches 0.6 with these means (red is about 0.53)',
  );
});

test('GetClassificationsFromCamera cycles through the image_file folder', async (t) => {
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await call(vision, 'getClassificationsFromCamera', cameraReq({ name: 'colours', cameraName: '', n: 1 }));
    seen.push(r.classifications[0]?.className ?? 'none');
  }
  // In name order: blue PNG, green JPEG (green needs 0.99, so another colour comes first), red PNG.
  t.is(seen[0], 'blue');
  t.not(seen[1], 'green');
  t.is(seen[2], 'red');
  const cameras = new CameraServiceClient(runtime.address, insecure());
  const image = await call(cameras, 'getImage', { name: 'one', mimeType: '' });
  t.is(image.mimeType, 'image/jpeg');
  t.deepEqual([image.width, image.height], [16, 16]);
  const asPng = await call(cameras, 'getImage', { name: 'one', mimeType: 'image/png' });
  t.is(asPng.mimeType, 'image/png');
  // The fake depth camera serves its colour image too.
  const fromFake = await call(vision, 'getClassificationsFromCamera', cameraReq({ name: 'picky', cameraName: 'depth', n: 3 }));
  t.true(Array.isArray(fromFake.classifications));
});

test('errors name the field and the rule', async (t) => {
  const messages: Record<string, { fromPartial(o: object): unknown }> = {
    getClassifications: GetClassificationsRequest,
    getDetections: GetDetectionsRequest,
    getClassificationsFromCamera: GetClassificationsFromCameraRequest,
  };
  const fail = async (method: string, request: object) =>
    (await t.throwsAsync(call(vision, method as 'getDetections', messages[method].fromPartial(request)))) as ServiceError;
  const notImage = await fail('getClassifications', { name: 'colours', image: Buffer.from('hello'), mimeType: '' });
  t.is(notImage.code, status.INVALID_ARGUMENT);
  t.regex(notImage.details, /mime_type "": must be image\/png or image\/jpeg/);
  const badPng = await fail('getClassifications', { name: 'colours', image: Buffer.from('hello'), mimeType: 'image/png' });
  t.regex(badPng.details, /image: not a PNG image/);
  const size = await fail('getClassifications', { name: 'colours', image: png(colours.red), mimeType: 'image/png', width: 10, height: 7 });
  t.regex(size.details, /width\/height 10x7: the image is 9x7/);
  const detections = await fail('getDetections', { name: 'colours', image: png(colours.red), mimeType: 'image/png' });
  t.is(detections.code, status.UNIMPLEMENTED);
  t.regex(detections.details, /no boxes and scores outputs/);
  const otherCamera = await fail('getClassificationsFromCamera', { name: 'colours', cameraName: 'one', n: 1 });
  t.regex(otherCamera.details, /camera_name "one": not a dependency of this service/);
  const robot = new RobotServiceClient(runtime.address, insecure());
  let wrong = '';
  for (let i = 0; i < 600 && !wrong; i++) {
    wrong = (await call(robot, 'getMachineStatus', {})).resources.find((r: { name: { name: string } }) => r.name.name === 'wrong')?.error ?? '';
    if (!wrong) await new Promise((r) => setTimeout(r, 100));
  }
  t.regex(wrong, /mlmodel_name "files": must name an mlmodel service/);
});
