// Training with default arguments on a small dataset: the steps come from the dataset's size, the best
// checkpoint is kept, and a model no better than chance is called that in the logs and the metrics.
import test from 'ava';
import { encode } from 'fast-png';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MLTraining } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { runOnnx, singleLabelAccuracy } from './testing/onnx-check.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const root = await mkdtemp(join(tmpdir(), 'small-'));
  const source = new MemoryDataSource();
  const training = new MLTraining({ root, dataSource: source, trainerThreads: 1 });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  const done = (id: string) =>
    waitFor('the job to end', async () => {
      const job = await training.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(job.status) && job;
    });
  return { source, training, done };
}

test('40 images with default arguments train a model that tells the two labels apart', async (t) => {
  const { source, training, done } = await setup(t);
  const datasetId = source.addShapes('org', shapeImages(40, { colours: ['red', 'blue'], size: 32 }));
  // Only the image size is given (32 keeps the test fast); epochs, batch size and stopping are the defaults.
  const id = await training.submitTrainingJob({
    organizationId: 'org',
    datasetId,
    modelName: 'm',
    modelVersion: 'v1',
    modelType: 'SINGLE_LABEL_CLASSIFICATION',
    tags: ['red', 'blue'],
    arguments: { image_size: '32' },
  });
  const job = await done(id);
  t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
  t.true(job.validationMetrics.accuracy >= 0.9, JSON.stringify(job.validationMetrics));
  t.is(job.validationMetrics.better_than_chance, 1);
  t.is(job.validationMetrics.chance_accuracy, 0.5);
  const { logs } = await training.getTrainingJobLogs(id);
  t.true(
    logs.some((l) => /training on 32 images, validating on 8; .*batch size 8, up to 100 epochs/.test(l.message)),
    'steps are chosen from the size',
  );
  t.true(logs.some((l) => l.message.startsWith('keeping the best checkpoint: epoch')));
  t.false(logs.some((l) => l.message.includes('no better than chance')));

  const fresh = shapeImages(20, { colours: ['red', 'blue'], size: 32, seed: 99 });
  const model = await training.artefacts.readFile('org', 'm', 'v1', 'model.onnx');
  const labels = (await training.artefacts.readFile('org', 'm', 'v1', 'labels.txt')).toString('utf8').trim().split('\n');
  const { probabilities } = await runOnnx(model, fresh, 32);
  t.true(singleLabelAccuracy(probabilities.data, labels, fresh) >= 0.9);
});

test('a model no better than chance says so in its logs and metrics', async (t) => {
  const { source, training, done } = await setup(t);
  // Every image is the same grey square, half tagged one way and half the other: nothing can be learned.
  const grey = encode({ width: 16, height: 16, data: new Uint8Array(16 * 16 * 3).fill(128), channels: 3, depth: 8 });
  const datasetId = source.addDataset(
    'org',
    Array.from({ length: 12 }, (_, i) => ({ png: grey, tags: [i % 2 ? 'a' : 'b'] })),
  );
  const id = await training.submitTrainingJob({
    organizationId: 'org',
    datasetId,
    modelName: 'm',
    modelVersion: 'v1',
    modelType: 'SINGLE_LABEL_CLASSIFICATION',
    tags: ['a', 'b'],
    arguments: { image_size: '16', epochs: '3' },
  });
  const job = await done(id);
  t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
  t.is(job.validationMetrics.accuracy, 0.5);
  t.is(job.validationMetrics.chance_accuracy, 0.5);
  t.is(job.validationMetrics.better_than_chance, 0);
  const { logs } = await training.getTrainingJobLogs(id);
  const notice = logs.find((l) => l.message.startsWith('the model is no better than chance'));
  t.is(notice?.level, 'warn');
  t.regex(notice!.message, /validation accuracy 0\.500 is not above 0\.500, what always answering the most common label scores/);
});
