// The closed loop through the real programs: 80 labelled 64x64 images of two classes are uploaded to a
// real platform-cloud -> dataset -> built-in training with default arguments -> the part's cloud config
// lists the two models as ml_model packages and runs them with an onnx_cpu ML model service and an
// mlmodel vision service each -> a real platform-server, online from a credentials file, downloads the
// packages -> held-out images of the same kind are labelled (and their shapes found) over gRPC.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelType, TrainingStatus } from '../../cloud/client/ml-training-client.js';
import { cloudFixture, type CloudFixture } from '../../cloud/mltraining/testing/training-fixture.js';
import { shapeImages } from '../../cloud/mltraining/testing/shapes.js';
import { call as cloudCall, partClients } from '../../cloud/parts/testing/part-clients.js';
import { removeDataDir } from '../../cloud/testing/spawn-cloud.js';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime } from '../../core/server/testing/spawn-runtime.js';
import { GetClassificationsRequest, GetDetectionsRequest, VisionServiceClient } from '../../gen/platform/service/vision/v1/vision.js';

// The spawned cloud inherits these: both jobs at once, one PyTorch thread each (CI has two cores).
process.env.PLATFORM_TRAINING_CONCURRENCY = '2';
process.env.PLATFORM_TRAINING_CONCURRENCY_PER_ORG = '2'; // one organization here: its jobs may run side by side
process.env.PLATFORM_TRAINING_THREADS = '1';

const classes = ['red', 'blue'] as const;

const iou = (a: number[], b: number[]) => {
  const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  return (w * h) / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h);
};

/** An ML model service and a vision service on it, the model read from an installed package. */
const packagedModel = (name: string, visionAttributes: Record<string, unknown> = {}) => [
  {
    name: `${name}-model`,
    api: 'core:service:mlmodel',
    model: 'onnx_cpu',
    attributes: { model_path: `\${packages.${name}}/model.onnx`, label_path: `\${packages.${name}}/labels.txt` },
  },
  { name, api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: `${name}-model`, ...visionAttributes } },
];

let fx: CloudFixture | undefined;
const work = mkdtempSync(join(tmpdir(), 'closed-loop-'));
test.after.always(async () => {
  await fx?.close();
  removeDataDir(work);
});

test('a model trained in the cloud with default arguments is installed as a package by an online machine and labels held-out images', async (t) => {
  // Training two models from scratch with their default schedules takes minutes on a busy 2-core machine.
  t.timeout(15 * 60_000);
  fx = await cloudFixture();
  const { datasetId } = await fx.uploadDataset('colours', shapeImages(80, { colours: [...classes], seed: 5 }));
  const submit = (modelName: string, modelType: ModelType) =>
    fx!.training.submitTrainingJob(fx!.orgId, datasetId, modelName, 'v1', modelType, [...classes], {});
  const ids = [await submit('colours', ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION), await submit('finder', ModelType.MODEL_TYPE_OBJECT_DETECTION)];
  for (const id of ids) {
    const job = await waitFor(
      `job ${id}`,
      async () => {
        const j = await fx!.training.getTrainingJob(id);
        const done = [TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED];
        return done.includes(j.status) && j;
      },
      600_000,
    );
    t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED, job.errorStatus?.message);
    t.log(`${job.modelName}: ${JSON.stringify(job.validationMetrics)}, trained in ${(job.trainingEnded!.getTime() - job.trainingStarted!.getTime()) / 1000} s`);
    t.is(job.validationMetrics.better_than_chance, 1, JSON.stringify(job.validationMetrics));
  }

  // The part's cloud config: the two packages and their services.
  const owner = await partClients(fx.cloud.address, fx.ownerKey);
  t.teardown(() => owner.close());
  const robotConfig = {
    packages: ['colours', 'finder'].map((model) => ({ name: model, package: `${fx!.orgId}/${model}`, version: 'v1', type: 'ml_model' })),
    services: [...packagedModel('colours'), ...packagedModel('finder', { default_minimum_confidence: 0.3 })],
  };
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: fx.partId, robotConfig }, owner.md);

  const runtime = await spawnRuntime(
    { cloud: { id: fx.partId, secret: fx.partSecret, app_address: fx.cloud.address } },
    { env: { PLATFORM_ONLINE_DIR: join(work, 'online'), PLATFORM_PACKAGES_DIR: join(work, 'packages') } },
  );
  t.teardown(() => runtime.stop());
  const vision = new VisionServiceClient(runtime.address, insecure());
  t.teardown(() => vision.close());
  const classify = (png: Uint8Array) =>
    call(vision, 'getClassifications', GetClassificationsRequest.fromPartial({ name: 'colours', image: Buffer.from(png), mimeType: 'image/png', n: 1 }));
  const detect = (png: Uint8Array) =>
    call(vision, 'getDetections', GetDetectionsRequest.fromPartial({ name: 'finder', image: Buffer.from(png), mimeType: 'image/png' }));

  const heldOut = shapeImages(40, { colours: [...classes], seed: 77 });
  // The machine downloads both packages after it fetched its config; the services are ready after that.
  await waitFor('the packaged models', () => Promise.all([classify(heldOut[0].png), detect(heldOut[0].png)]).catch(() => undefined), 180_000);

  let right = 0;
  for (const image of heldOut) {
    const r = await classify(image.png);
    if (r.classifications[0]?.className === image.labels[0]) right += 1;
  }
  t.true(right / heldOut.length >= 0.9, `GetClassifications right on ${right} of ${heldOut.length}`);

  let found = 0;
  let total = 0;
  for (const image of heldOut) {
    const r = await detect(image.png);
    for (const object of image.objects) {
      total += 1;
      const truth = object.box.map((v) => v * 64);
      if (
        r.detections.some(
          (d: { className: string; xMin: number; yMin: number; xMax: number; yMax: number }) =>
            d.className === object.label && iou([d.xMin, d.yMin, d.xMax, d.yMax], truth) >= 0.5,
        )
      )
        found += 1;
    }
  }
  t.true(found / total >= 0.8, `GetDetections found ${found} of ${total} boxes at IoU >= 0.5`);
});
