// With tracing on, a training job's whole run is one span ('training job', with its id and model name).
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../core/serving/telemetry/tracing.js';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { MLTraining } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { scriptPackage } from './testing/script-package.js';
import { writerScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';

test('a training job is a span from its start to its end state', async (t) => {
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'platform-cloud', exporters: [memory] });
  t.teardown(() => tracing.shutdown());
  const root = await mkdtemp(join(tmpdir(), 'mltraining-span-'));
  const source = new MemoryDataSource();
  const datasetId = source.addShapes('org-1', shapeImages(6));
  const training = new MLTraining({ root, dataSource: source, killGraceMs: 500 });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  await training.registry.upload({
    organizationId: 'org-1',
    registryItemId: 'writer',
    version: '1.0.0',
    entrypoint: 'train.sh',
    package: await scriptPackage({ 'train.sh': { content: writerScript, mode: 0o755 } }),
  });
  const id = await training.submitCustomTrainingJob({
    organizationId: 'org-1',
    datasetId,
    registryItemId: 'writer',
    registryItemVersion: '1.0.0',
    modelName: 'm',
    modelVersion: 'v1',
    arguments: {},
  });
  await waitFor(`job ${id} to finish`, async () => (await training.getTrainingJob(id)).status === 'COMPLETED');
  const span = await waitFor('the job span', () => memory.getFinishedSpans().find((s) => s.name === 'training job'));
  t.is(span.attributes['platform.training_job_id'], id);
  t.is(span.attributes['platform.model_name'], 'm');
  t.is(span.status.code, 0, 'UNSET: no error');
});
