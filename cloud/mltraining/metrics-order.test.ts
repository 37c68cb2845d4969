// A trainer's events are handled in the order it wrote them: its final `metrics` event is what the job
// keeps, not an earlier progress event whose handler finished later.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MLTraining } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { scriptPackage } from './testing/script-package.js';
import { finalMetricsScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

const org = 'org-1';

test('the final metrics event of a custom script wins over the progress event before it', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mltraining-'));
  const source = new MemoryDataSource();
  const datasetId = source.addShapes(org, shapeImages(4));
  const training = new MLTraining({ root, dataSource: source, killGraceMs: 500 });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  await training.registry.upload({
    organizationId: org,
    registryItemId: 'final',
    version: '1.0.0',
    entrypoint: 'train.sh',
    package: await scriptPackage({ 'train.sh': { content: finalMetricsScript, mode: 0o755 } }),
  });
  for (const version of ['v1', 'v2', 'v3']) {
    const id = await training.submitCustomTrainingJob({
      organizationId: org,
      datasetId,
      registryItemId: 'final',
      registryItemVersion: '1.0.0',
      modelName: 'm',
      modelVersion: version,
      arguments: {},
    });
    const job = await waitFor(`job ${id} to finish`, async () => {
      const j = await training.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status) && j;
    });
    t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
    t.deepEqual(job.validationMetrics, { accuracy: 0.93, f1: 0.9 });
    t.deepEqual((await training.artefacts.list(org, 'm')).find((a) => a.modelVersion === version)?.validationMetrics, { accuracy: 0.93, f1: 0.9 });
  }
});
