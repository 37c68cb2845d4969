// A data dir of before issue 33 (jobs, models and scripts as files under <data-dir>/mltraining) is
// imported into the tables and the blob store at the embedded default's start, once, losing nothing.
import test from 'ava';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { MLTraining } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { writerScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';
import type { TrainingJob } from './training-job.js';

const org = 'org-1';
const job = (id: string, status: TrainingJob['status'], over: Partial<TrainingJob> = {}): TrainingJob => ({
  id,
  organizationId: org,
  datasetId: 'd',
  modelName: 'm',
  modelVersion: id,
  isCustomJob: true,
  registryItemId: 'acme:writer',
  registryItemVersion: '1.0.0',
  status,
  createdOn: '2026-01-01T00:00:00.000Z',
  lastModified: '2026-01-01T00:00:00.000Z',
  syncedModelId: '',
  tags: [],
  arguments: {},
  validationMetrics: {},
  ...over,
});

async function write(path: string, content: string | Buffer, mode = 0o644): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content, { mode });
}

test('jobs, logs, models and scripts of the file layout move into the tables and blobs once', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mltraining-legacy-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const modelId = 'a7e3c1d2-0000-4000-8000-000000000001';
  await write(join(root, 'jobs', 'done.json'), JSON.stringify(job('done', 'COMPLETED', { syncedModelId: modelId })));
  await write(
    join(root, 'jobs', 'done.logs.jsonl'),
    '{"level":"info","time":"t1","message":"one"}\n{"level":"info","time":"t2","message":"two"}\n{"level":"in',
  );
  await write(join(root, 'jobs', 'cut.json'), JSON.stringify(job('cut', 'IN_PROGRESS')));
  await write(join(root, 'jobs', 'broken.json'), '{"id": ');
  const artefact = {
    id: modelId,
    organizationId: org,
    modelName: 'm',
    modelVersion: 'done',
    trainingJobId: 'done',
    files: [
      { name: 'labels.txt', sizeBytes: 4 },
      { name: 'nested/model.onnx', sizeBytes: 4 },
    ],
    labels: ['red'],
    validationMetrics: { accuracy: 0.9 },
    createdOn: '2026-01-01T01:00:00.000Z',
  };
  await write(join(root, 'models', org, modelId, 'manifest.json'), JSON.stringify(artefact));
  await write(join(root, 'models', org, modelId, 'files', 'labels.txt'), 'red\n');
  await write(join(root, 'models', org, modelId, 'files', 'nested', 'model.onnx'), 'onnx');
  const script = {
    organizationId: org,
    registryItemId: 'acme:writer',
    version: '1.0.0',
    entrypoint: 'train.sh',
    description: 'writes a model',
    packageSizeBytes: 300,
    unpackedBytes: writerScript.length,
    createdOn: '2026-01-01T00:30:00.000Z',
  };
  await write(join(root, 'registry', org, 'acme:writer', '1.0.0', 'manifest.json'), JSON.stringify(script));
  await write(join(root, 'registry', org, 'acme:writer', '1.0.0', 'package', 'train.sh'), writerScript, 0o755);

  const source = new MemoryDataSource();
  const datasetId = source.addShapes(org, shapeImages(3));
  const training = new MLTraining({ root, dataSource: source, killGraceMs: 500 });
  await training.start();
  t.teardown(() => training.stop());

  const done = await training.getTrainingJob('done');
  t.is(done.status, 'COMPLETED');
  t.deepEqual(
    (await training.getTrainingJobLogs('done')).logs.map((l) => l.message),
    ['one', 'two'],
  );
  // Running when the old cloud stopped: failed with the reason, as after any restart.
  const cut = await training.getTrainingJob('cut');
  t.is(cut.status, 'FAILED');
  t.is(cut.errorStatus?.code, 14);
  t.deepEqual(await training.artefacts.list(org), [artefact]);
  t.is((await training.artefacts.readFile(org, 'm', 'done', 'nested/model.onnx')).toString(), 'onnx');
  t.deepEqual(await training.registry.list(org), [script]);
  t.false(existsSync(join(root, 'jobs')) || existsSync(join(root, 'models')) || existsSync(join(root, 'registry')));
  t.is((await readdir(join(root, 'imported'))).length, 3, 'the old folders are kept aside, not deleted');
  t.true((await readdir(join(root, 'imported'))).some((f) => f.startsWith('jobs-')));

  // The imported script runs: its package was packed again from the unpacked folder.
  const id = await training.submitCustomTrainingJob({
    organizationId: org,
    datasetId,
    registryItemId: 'acme:writer',
    registryItemVersion: '1.0.0',
    modelName: 'm',
    modelVersion: 'v2',
  });
  const ran = await waitFor('the job to end', async () => {
    const j = await training.getTrainingJob(id);
    return ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status) && j;
  });
  t.is(ran.status, 'COMPLETED', JSON.stringify(ran.errorStatus));
  t.is((await training.artefacts.readFile(org, 'm', 'v2', 'model.onnx')).toString(), 'fake-onnx');

  // A second start finds nothing more to import.
  await training.stop();
  const again = new MLTraining({ root, dataSource: source, killGraceMs: 500 });
  await again.start();
  t.teardown(() => again.stop());
  t.is((await again.listTrainingJobs(org)).length, 3);
  t.is((await again.artefacts.list(org)).length, 2);
  t.is(
    await readFile(
      join(
        root,
        'imported',
        (await readdir(join(root, 'imported'))).find((f) => f.startsWith('jobs-'))!,
        'broken.json',
      ),
      'utf8',
    ),
    '{"id": ',
  );
});
