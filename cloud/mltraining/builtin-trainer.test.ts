// The built-in PyTorch trainer's refusals (the successful runs are in e2e.test.ts).
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MLTraining } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

test('a job whose tags no image carries fails FAILED_PRECONDITION naming the label', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'builtin-'));
  const source = new MemoryDataSource();
  const datasetId = source.addShapes('org', shapeImages(12, { colours: ['red', 'blue'] }));
  const empty = source.addDataset('org', []);
  const training = new MLTraining({ root, dataSource: source, trainerThreads: 1 });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  const submit = (modelType: 'SINGLE_LABEL_CLASSIFICATION' | 'OBJECT_DETECTION', version: string, dataset = datasetId) =>
    training.submitTrainingJob({
      organizationId: 'org',
      datasetId: dataset,
      modelName: 'm',
      modelVersion: version,
      modelType,
      tags: ['red', 'green'],
      arguments: { epochs: '1' },
    });
  const done = (id: string) =>
    waitFor('the job to end', async () => {
      const job = await training.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(job.status) && job;
    });
  const classify = await done(await submit('SINGLE_LABEL_CLASSIFICATION', 'v1'));
  t.is(classify.status, 'FAILED');
  t.is(classify.errorStatus?.code, status.FAILED_PRECONDITION);
  t.is(classify.errorStatus?.message, 'no image in the dataset carries the label(s) green');
  const detect = await done(await submit('OBJECT_DETECTION', 'v2'));
  t.is(detect.errorStatus?.message, 'no bounding box in the dataset carries the label(s) green');
  const nothing = await done(await submit('OBJECT_DETECTION', 'v3', empty));
  t.is(nothing.errorStatus?.code, status.FAILED_PRECONDITION);
  t.regex(nothing.errorStatus!.message, /has no images/);
  t.is((await training.artefacts.list('org')).length, 0);
});
