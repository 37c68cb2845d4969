// End to end, through the real platform-cloud and the real clients: upload labelled shape images, build
// a dataset, train each built-in model type past its threshold, check the downloaded ONNX artefacts,
// run a custom script job, cancel a running job, delete a completed job, survive restarts and a crash.
import { Metadata, status } from '@grpc/grpc-js';
import test from 'ava';
import { MLTrainingClient, ModelFramework, ModelType, TrainingStatus } from '../client/ml-training-client.js';
import { centroidTraining } from './testing/centroid-script.js';
import { cloudFixture, type CloudFixture } from './testing/training-fixture.js';
import { detectionRecall, multiLabelExactMatch, runOnnx, singleLabelAccuracy } from './testing/onnx-check.js';
import { isRunning, jobProcesses } from './testing/processes.js';
import { scriptPackage } from './testing/script-package.js';
import { blockerScript, stubbornScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

// The spawned cloud inherits these: three jobs at once, one PyTorch thread each (CI has two cores).
process.env.PLATFORM_TRAINING_CONCURRENCY = '3';
process.env.PLATFORM_TRAINING_CONCURRENCY_PER_ORG = '3'; // one organization here: its jobs may run side by side
process.env.PLATFORM_TRAINING_THREADS = '1';

const labels = ['blue', 'green', 'red'];
let fx: CloudFixture;
let datasetId: string;

test.before(async () => {
  fx = await cloudFixture();
  ({ datasetId } = await fx.uploadDataset('shapes', shapeImages(150, { maxObjects: 2, seed: 7 })));
});

test.after.always(async () => {
  await fx?.close();
});

const finished = (id: string, client = () => fx.training) =>
  waitFor(
    `job ${id} to finish`,
    async () => {
      const job = await client().getTrainingJob(id);
      const done = [TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED];
      return done.includes(job.status) && job;
    },
    300_000,
  );

const codeOf = (err: unknown) => (err as { code?: number }).code;

test.serial('only organization-owner keys may use the training API', async (t) => {
  const operator = fx.operator.mlTrainingClient;
  const anonymous = new MLTrainingClient(fx.owner.connection.address, () => new Metadata(), fx.owner.connection.channel);
  try {
    const denied = await t.throwsAsync(operator.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED));
    t.is(codeOf(denied), status.PERMISSION_DENIED);
    t.regex(denied!.message, /owner role/);
    const submit = await t.throwsAsync(operator.submitTrainingJob(fx.orgId, datasetId, 'm', 'v1', ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, labels));
    t.is(codeOf(submit), status.PERMISSION_DENIED);
    const local = await t.throwsAsync(fx.locationOwner.mlTrainingClient.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED));
    t.is(codeOf(local), status.PERMISSION_DENIED);
    t.regex(local!.message, /not an organization-level key/);
    t.is(codeOf(await t.throwsAsync(anonymous.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED))), status.UNAUTHENTICATED);
    t.is(codeOf(await t.throwsAsync(fx.training.listTrainingJobs('another-org', TrainingStatus.TRAINING_STATUS_UNSPECIFIED))), status.PERMISSION_DENIED);
  } finally {
    anonymous.close();
  }
});

// Split into one test per model so that AVA's inactivity timeout sees progress while jobs train.
const built: Record<'single' | 'multi' | 'detect', string> = { single: '', multi: '', detect: '' };
const download = (model: string, file: string) => fx.training.downloadModelArtefact(fx.orgId, model, 'v1', file);

test.serial('built-in jobs for the three model types are queued', async (t) => {
  const args = (target: string) => ({ epochs: '40', target_metric: target, seed: '3' });
  built.single = await fx.training.submitTrainingJob(
    fx.orgId,
    datasetId,
    'colours',
    'v1',
    ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION,
    labels,
    args('0.97'),
  );
  built.multi = await fx.training.submitTrainingJob(
    fx.orgId,
    datasetId,
    'colour-sets',
    'v1',
    ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION,
    labels,
    args('0.95'),
  );
  built.detect = await fx.training.submitTrainingJob(fx.orgId, datasetId, 'shapes', 'v1', ModelType.MODEL_TYPE_OBJECT_DETECTION, labels, args('0.85'));
  const job = await fx.training.getTrainingJob(built.single);
  t.is(job.modelType, ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION);
  t.is(job.modelFramework, ModelFramework.MODEL_FRAMEWORK_ONNX);
  t.false(job.isCustomJob);
  t.deepEqual(job.tags, labels);
  t.deepEqual(job.arguments, args('0.97'));
  t.truthy(job.createdOn);
});

test.serial('single-label classification passes 0.9 validation accuracy; its ONNX artefact agrees', async (t) => {
  const job = await finished(built.single);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED, job.errorStatus?.message);
  t.true(job.validationMetrics.accuracy >= 0.9, `accuracy ${job.validationMetrics.accuracy}`);
  t.is(job.progress?.validationMetricName, 'accuracy');
  t.truthy(job.trainingStarted && job.trainingEnded);
  const [artefact] = await fx.training.listModelArtefacts(fx.orgId, 'colours');
  t.is(artefact.id, job.syncedModelId);
  t.is(artefact.modelVersion, 'v1');
  t.deepEqual(
    artefact.files.map((f) => f.name),
    ['labels.txt', 'metrics.json', 'model.onnx'],
  );
  t.deepEqual(artefact.labels, labels);
  t.is((await download('colours', 'labels.txt')).toString(), 'blue\ngreen\nred\n');
  const fresh = shapeImages(60, { seed: 99 });
  const out = await runOnnx(await download('colours', 'model.onnx'), fresh);
  t.true(singleLabelAccuracy(out.probabilities.data, labels, fresh) >= 0.85);
  const logs = await fx.training.getTrainingJobLogs(built.single);
  t.true(logs.logs.some((l) => /^epoch 1\/40: loss/.test(l.message)));
  t.is(logs.nextPageToken, '');
  t.is(codeOf(await t.throwsAsync(download('colours', 'weights.bin'))), status.NOT_FOUND);
});

test.serial('multi-label classification passes 0.8 validation exact match; its ONNX artefact agrees', async (t) => {
  const job = await finished(built.multi);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED, job.errorStatus?.message);
  t.true(job.validationMetrics.exact_match >= 0.8, `exact match ${job.validationMetrics.exact_match}`);
  const fresh = shapeImages(60, { seed: 98, maxObjects: 2 });
  const out = await runOnnx(await download('colour-sets', 'model.onnx'), fresh);
  t.true(multiLabelExactMatch(out.probabilities.data, labels, fresh) >= 0.7);
});

test.serial('object detection passes 0.5 validation mAP@0.5; its ONNX artefact finds the shapes', async (t) => {
  const job = await finished(built.detect);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED, job.errorStatus?.message);
  t.true(job.validationMetrics.map50 >= 0.5, `mAP@0.5 ${job.validationMetrics.map50}`);
  const fresh = shapeImages(60, { seed: 97, maxObjects: 2 });
  const out = await runOnnx(await download('shapes', 'model.onnx'), fresh);
  t.true(detectionRecall(out.boxes.data, out.scores.data, out.boxes.dims, labels, fresh) >= 0.5);
  t.deepEqual((await fx.training.listModelArtefacts(fx.orgId)).map((a) => a.modelName).sort(), ['colour-sets', 'colours', 'shapes']);
});

test.serial('a custom script from the registry trains on the exported dataset', async (t) => {
  const pkg = await scriptPackage({ 'model/__init__.py': '', 'model/training.py': centroidTraining });
  const script = await fx.training.uploadTrainingScript(fx.orgId, 'shapes:centroid', '1.0.0', 'model/training.py', pkg, { description: 'colour centroids' });
  t.is(script.entrypoint, 'model/training.py');
  const again = await t.throwsAsync(fx.training.uploadTrainingScript(fx.orgId, 'shapes:centroid', '1.0.0', 'model/training.py', pkg));
  t.is(codeOf(again), status.ALREADY_EXISTS);
  t.deepEqual(
    (await fx.training.listTrainingScripts(fx.orgId)).map((s) => `${s.registryItemId}@${s.version}`),
    ['shapes:centroid@1.0.0'],
  );

  const id = await fx.training.submitCustomTrainingJob(fx.orgId, datasetId, 'shapes:centroid', '1.0.0', 'centroid', '2024-05-01', {
    validation_fraction: '0.3',
  });
  const job = await finished(id);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED, job.errorStatus?.message);
  t.true(job.isCustomJob);
  t.is(job.registryItemId, 'shapes:centroid');
  t.deepEqual(job.arguments, { validation_fraction: '0.3' });
  t.true(job.validationMetrics.accuracy >= 0.9, `accuracy ${job.validationMetrics.accuracy}`);
  const model = JSON.parse((await fx.training.downloadModelArtefact(fx.orgId, 'centroid', '2024-05-01', 'model.json')).toString());
  t.deepEqual(Object.keys(model.centroids).sort(), labels);
});

test.serial('cancel, delete, list filters and the errors of the job API', async (t) => {
  const pkg = await scriptPackage({ 'block.sh': { content: blockerScript, mode: 0o755 } });
  await fx.training.uploadTrainingScript(fx.orgId, 'blocker', '1', 'block.sh', pkg);
  // This one survives SIGTERM until the SIGKILL 5 s later, so CANCELING is there to be seen.
  const stubborn = await scriptPackage({ 'stubborn.sh': { content: stubbornScript, mode: 0o755 } });
  await fx.training.uploadTrainingScript(fx.orgId, 'stubborn', '1', 'stubborn.sh', stubborn);
  const id = await fx.training.submitCustomTrainingJob(fx.orgId, datasetId, 'stubborn', '1', 'blocked', 'v1');
  const child = await waitFor('the blocker to start', () => jobProcesses(id, 'sleep')[0]);
  t.is((await fx.training.getTrainingJob(id)).status, TrainingStatus.TRAINING_STATUS_IN_PROGRESS);
  t.is(codeOf(await t.throwsAsync(fx.training.deleteCompletedTrainingJob(id))), status.FAILED_PRECONDITION);
  t.deepEqual(
    (await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_IN_PROGRESS)).map((j) => j.id),
    [id],
  );

  await fx.training.cancelTrainingJob(id);
  t.is((await fx.training.getTrainingJob(id)).status, TrainingStatus.TRAINING_STATUS_CANCELING);
  const canceled = await finished(id);
  t.is(canceled.status, TrainingStatus.TRAINING_STATUS_CANCELED);
  t.false(isRunning(child));
  t.is(codeOf(await t.throwsAsync(fx.training.cancelTrainingJob('no-such-job'))), status.NOT_FOUND);

  const reused = await t.throwsAsync(
    fx.training.submitTrainingJob(fx.orgId, datasetId, 'colours', 'v1', ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, labels),
  );
  t.is(codeOf(reused), status.ALREADY_EXISTS);

  const all = await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED);
  const completed = await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_COMPLETED);
  t.is(all.length, 5);
  t.is(completed.length, 4);
  const victim = completed.find((j) => j.modelName === 'colour-sets')!;
  await fx.training.deleteCompletedTrainingJob(victim.id);
  t.is(codeOf(await t.throwsAsync(fx.training.getTrainingJob(victim.id))), status.NOT_FOUND);
  t.is((await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED)).length, 4);
});

test.serial('jobs survive a restart; a job running when the cloud is killed becomes FAILED with the reason', async (t) => {
  const before = await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED);
  await fx.restart('stop');
  const after = await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED);
  t.deepEqual(
    after.map((j) => [j.id, j.status]),
    before.map((j) => [j.id, j.status]),
  );
  t.is((await fx.training.downloadModelArtefact(fx.orgId, 'colours', 'v1', 'labels.txt')).toString(), 'blue\ngreen\nred\n');

  const id = await fx.training.submitCustomTrainingJob(fx.orgId, datasetId, 'blocker', '1', 'blocked', 'v2');
  const child = await waitFor('the blocker to start', () => jobProcesses(id, 'sleep')[0]);
  await fx.restart('kill9');
  const job = await fx.training.getTrainingJob(id);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_FAILED);
  t.regex(job.errorStatus!.message, /the cloud stopped while the job was running/);
  // The restarted cloud ends the orphaned trainer group; SIGKILL takes a moment to land.
  await waitFor('the orphaned trainer to end', () => !isRunning(child), 30_000);
  t.false(isRunning(child));
});

test.serial("a training script version can be deleted through the client, only with the organization's owner key", async (t) => {
  const pkg = await scriptPackage({ 'train.sh': { content: blockerScript, mode: 0o755 } });
  await fx.training.uploadTrainingScript(fx.orgId, 'temporary', '1', 'train.sh', pkg);
  t.is(codeOf(await t.throwsAsync(fx.operator.mlTrainingClient.deleteTrainingScript(fx.orgId, 'temporary', '1'))), status.PERMISSION_DENIED);
  await fx.training.deleteTrainingScript(fx.orgId, 'temporary', '1');
  t.false((await fx.training.listTrainingScripts(fx.orgId)).some((s) => s.registryItemId === 'temporary'));
  t.is(codeOf(await t.throwsAsync(fx.training.deleteTrainingScript(fx.orgId, 'temporary', '1'))), status.NOT_FOUND);
});
