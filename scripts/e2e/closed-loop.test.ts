// The closed loop: 80 labelled 64x64 images of two classes -> dataset -> built-in training with default
// arguments -> the stored ONNX artefact served by the real platform-server through an onnx_cpu ML model
// service and an mlmodel vision service -> held-out images of the same kind are labelled over gRPC.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MLTraining } from '../../cloud/mltraining/ml-training.js';
import { MemoryDataSource } from '../../cloud/mltraining/testing/memory-data-source.js';
import { shapeImages } from '../../cloud/mltraining/testing/shapes.js';
import { waitFor } from '../../core/shared/testing/eventually.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime } from '../../core/server/testing/spawn-runtime.js';
import { GetClassificationsRequest, GetDetectionsRequest, VisionServiceClient } from '../../gen/platform/service/vision/v1/vision.js';

const org = 'org-closed-loop';
const classes = ['red', 'blue'] as const;

const iou = (a: number[], b: number[]) => {
  const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  return (w * h) / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h);
};

test('a model trained with default arguments is served by the runtime and labels held-out images', async (t) => {
  // Training two models from scratch with their default schedules takes minutes on a busy 2-core machine.
  t.timeout(15 * 60_000);
  const root = await mkdtemp(join(tmpdir(), 'closed-loop-'));
  const source = new MemoryDataSource();
  const datasetId = source.addShapes(org, shapeImages(80, { colours: [...classes], seed: 5 }));
  // Both jobs at once, one thread each: the machine running CI has few cores.
  const training = new MLTraining({ root, dataSource: source, concurrency: 2, trainerThreads: 1 });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  const submit = (modelName: string, modelType: 'SINGLE_LABEL_CLASSIFICATION' | 'OBJECT_DETECTION') =>
    training.submitTrainingJob({ organizationId: org, datasetId, modelName, modelVersion: 'v1', modelType, tags: [...classes], arguments: {} });
  const ids = [await submit('colours', 'SINGLE_LABEL_CLASSIFICATION'), await submit('finder', 'OBJECT_DETECTION')];
  for (const id of ids) {
    const job = await waitFor(
      `job ${id}`,
      () => {
        const j = training.getTrainingJob(id);
        return ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status) && j;
      },
      600_000,
    );
    t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
    t.log(
      `${job.modelName}: ${JSON.stringify(job.validationMetrics)}, trained in ${(Date.parse(job.trainingEnded!) - Date.parse(job.trainingStarted!)) / 1000} s`,
    );
    t.is(job.validationMetrics.better_than_chance, 1, JSON.stringify(job.validationMetrics));
  }

  const folder = (model: string) => dirname(training.artefacts.filePath(org, model, 'v1', 'model.onnx'));
  const runtime = await spawnRuntime({
    services: [
      {
        name: 'colours-model',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: join(folder('colours'), 'model.onnx'), label_path: join(folder('colours'), 'labels.txt') },
      },
      { name: 'colours', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'colours-model' } },
      {
        name: 'finder-model',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: join(folder('finder'), 'model.onnx'), label_path: join(folder('finder'), 'labels.txt') },
      },
      { name: 'finder', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'finder-model', default_minimum_confidence: 0.3 } },
    ],
  });
  t.teardown(() => runtime.stop());
  const vision = new VisionServiceClient(runtime.address, insecure());

  const heldOut = shapeImages(40, { colours: [...classes], seed: 77 });
  let right = 0;
  for (const image of heldOut) {
    const r = await call(
      vision,
      'getClassifications',
      GetClassificationsRequest.fromPartial({ name: 'colours', image: Buffer.from(image.png), mimeType: 'image/png', n: 1 }),
    );
    if (r.classifications[0]?.className === image.labels[0]) right += 1;
  }
  t.true(right / heldOut.length >= 0.9, `GetClassifications right on ${right} of ${heldOut.length}`);

  let found = 0;
  let total = 0;
  for (const image of heldOut) {
    const r = await call(vision, 'getDetections', GetDetectionsRequest.fromPartial({ name: 'finder', image: Buffer.from(image.png), mimeType: 'image/png' }));
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
