import { status } from '@grpc/grpc-js';
import test from 'ava';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MLTraining, type MLTrainingOptions } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { isRunning, jobProcesses } from './testing/processes.js';
import { scriptPackage } from './testing/script-package.js';
import { blockerScript, failingScript, lazyScript, writerScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

const org = 'org-1';

async function setup(t: { teardown(fn: () => Promise<void>): void }, options: Partial<MLTrainingOptions> = {}) {
  const root = await mkdtemp(join(tmpdir(), 'mltraining-'));
  const source = new MemoryDataSource();
  const datasetId = source.addShapes(org, shapeImages(6));
  const training = new MLTraining({ root, dataSource: source, killGraceMs: 500, ...options });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  const upload = async (id: string, content: string, entrypoint = 'train.sh') =>
    training.registry.upload({
      organizationId: org,
      registryItemId: id,
      version: '1.0.0',
      entrypoint,
      package: await scriptPackage({ [entrypoint]: { content, mode: 0o755 } }),
    });
  return { root, source, datasetId, training, upload };
}

const finished = (training: MLTraining, id: string) =>
  waitFor(`job ${id} to finish`, async () => {
    const job = await training.getTrainingJob(id);
    return ['COMPLETED', 'FAILED', 'CANCELED'].includes(job.status) && job;
  });

const custom = (datasetId: string, registryItemId: string, modelVersion: string, args: Record<string, string> = {}) => ({
  organizationId: org,
  datasetId,
  registryItemId,
  registryItemVersion: '1.0.0',
  modelName: 'm',
  modelVersion,
  arguments: args,
});

test('a custom job gets the exported dataset and arguments, and its model becomes an artefact', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('writer', writerScript);
  const id = await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v1', { greeting: 'hello there' }));
  const job = await finished(training, id);
  t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
  t.true(job.isCustomJob);
  t.is(job.modelFramework, 'ONNX'); // guessed from model.onnx
  t.deepEqual(job.progress, { epoch: 1, totalEpochs: 1, loss: 0.5, validationMetricName: 'accuracy', validationMetric: 0.75, imagesPerSecond: 10 });
  t.truthy(job.trainingStarted && job.trainingEnded);
  const [artefact] = await training.artefacts.list(org, 'm');
  t.is(artefact.id, job.syncedModelId);
  t.deepEqual(
    artefact.files.map((f) => f.name),
    ['extra/greeting.txt', 'first-annotation.jsonl', 'model.onnx'],
  );
  t.is((await training.artefacts.readFile(org, 'm', 'v1', 'extra/greeting.txt')).toString('utf8'), 'hello there\n');
  const annotation = JSON.parse((await training.artefacts.readFile(org, 'm', 'v1', 'first-annotation.jsonl')).toString('utf8'));
  t.regex(annotation.image_path, /^images\/.+\.png$/);
  t.is(annotation.classification_annotations.length, 1);
  t.is(annotation.bounding_box_annotations.length, 1);
  const { logs } = await training.getTrainingJobLogs(id);
  t.true(logs.some((l) => l.message === 'training on 6 images'));
  t.true(logs.some((l) => l.message.startsWith('stored model m version v1')));
});

test('a reused model_version for the same model gives ALREADY_EXISTS; another model may use it', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('writer', writerScript);
  await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v1'));
  const err = await t.throwsAsync(training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v1')));
  t.is((err as { code?: number }).code, status.ALREADY_EXISTS);
  await t.notThrowsAsync(training.submitCustomTrainingJob({ ...custom(datasetId, 'writer', 'v1'), modelName: 'other' }));
});

test('cancel kills the whole process tree: CANCELING, then CANCELED', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('blocker', blockerScript);
  const id = await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1'));
  const grandchild = await waitFor('the script to start its child', () => jobProcesses(id, 'sleep')[0]);
  const trainer = (await training.getTrainingJob(id)).pid!;
  t.true(isRunning(grandchild));
  await training.cancelTrainingJob(id);
  t.is((await training.getTrainingJob(id)).status, 'CANCELING');
  const job = await finished(training, id);
  t.is(job.status, 'CANCELED');
  t.is(job.errorStatus?.code, status.CANCELLED);
  t.false(isRunning(grandchild));
  t.false(isRunning(trainer));
  const err = await t.throwsAsync(training.cancelTrainingJob(id));
  t.is((err as { code?: number }).code, status.FAILED_PRECONDITION);
});

test('the queue respects its concurrency; a pending job cancels at once', async (t) => {
  const { training, datasetId, upload } = await setup(t, { concurrency: 1 });
  await upload('blocker', blockerScript);
  await upload('writer', writerScript);
  const first = await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1'));
  const second = await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v2'));
  const third = await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v3'));
  await waitFor('the first job to run', () => jobProcesses(first, 'sleep').length > 0);
  t.is((await training.getTrainingJob(second)).status, 'PENDING');
  t.deepEqual(
    (await training.listTrainingJobs(org, 'PENDING')).map((j) => j.id),
    [second, third],
  );
  t.deepEqual(
    (await training.listTrainingJobs(org, 'IN_PROGRESS')).map((j) => j.id),
    [first],
  );
  t.is((await training.listTrainingJobs(org)).length, 3);
  t.is((await training.listTrainingJobs('another-org')).length, 0);
  await training.cancelTrainingJob(second);
  t.is((await training.getTrainingJob(second)).status, 'CANCELED');
  await training.cancelTrainingJob(first);
  t.is((await finished(training, third)).status, 'COMPLETED');
  t.is((await training.getTrainingJob(first)).status, 'CANCELED');
});

test('cancel and get of an unknown id give NOT_FOUND', async (t) => {
  const { training } = await setup(t);
  t.is(((await t.throwsAsync(training.cancelTrainingJob('nope'))) as { code?: number }).code, status.NOT_FOUND);
  t.is(((await t.throwsAsync(training.getTrainingJob('nope'))) as { code?: number }).code, status.NOT_FOUND);
});

test('only finished jobs can be deleted; a deleted job is gone but its model stays', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('blocker', blockerScript);
  await upload('writer', writerScript);
  const running = await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1'));
  await waitFor('the job to run', () => jobProcesses(running, 'sleep').length > 0);
  const err = await t.throwsAsync(training.deleteCompletedTrainingJob(running));
  t.is((err as { code?: number }).code, status.FAILED_PRECONDITION);
  t.regex((err as Error).message, /IN_PROGRESS/);
  await training.cancelTrainingJob(running);
  await finished(training, running);
  await training.deleteCompletedTrainingJob(running); // CANCELED counts as finished
  const done = await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v2'));
  await finished(training, done);
  await training.deleteCompletedTrainingJob(done);
  t.is(((await t.throwsAsync(training.getTrainingJob(done))) as { code?: number }).code, status.NOT_FOUND);
  t.is((await training.listTrainingJobs(org)).length, 0);
  t.is((await training.artefacts.list(org)).length, 1);
  // The model keeps its version: it cannot be trained again under it.
  const again = await t.throwsAsync(training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v2')));
  t.is((again as { code?: number }).code, status.ALREADY_EXISTS);
});

test('a failing script fails its job with the reason from stderr; one writing no model fails too', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('failing', failingScript);
  await upload('lazy', lazyScript);
  const failing = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'failing', 'v1')));
  t.is(failing.status, 'FAILED');
  t.is(failing.errorStatus?.code, status.INTERNAL);
  t.is(failing.errorStatus?.message, 'the trainer exited with code 7: something went wrong: no GPU found');
  const lazy = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'lazy', 'v2')));
  t.is(lazy.status, 'FAILED');
  t.regex(lazy.errorStatus!.message, /without writing a model/);
  t.is((await training.artefacts.list(org)).length, 0);
});

test('a script past its wall-clock limit is stopped and fails with DEADLINE_EXCEEDED', async (t) => {
  const { training, datasetId, upload } = await setup(t, { customLimits: { wallSeconds: 1 } });
  await upload('blocker', blockerScript);
  const job = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1')));
  t.is(job.status, 'FAILED');
  t.is(job.errorStatus?.code, status.DEADLINE_EXCEEDED);
  t.deepEqual(jobProcesses(job.id), []);
});

test('a script past its memory limit fails with RESOURCE_EXHAUSTED', async (t) => {
  const { training, datasetId, upload } = await setup(t, { customLimits: { wallSeconds: 60, memoryBytes: 200 * 2 ** 20 } });
  await upload('hog', 'import sys\nblob = bytearray(400 * 2 ** 20)\nprint("allocated")\n', 'hog.py');
  const job = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'hog', 'v1')));
  t.is(job.status, 'FAILED');
  t.is(job.errorStatus?.code, status.RESOURCE_EXHAUSTED);
  t.regex(job.errorStatus!.message, /out of memory/);
});

test('submit checks its fields and names the broken rule', async (t) => {
  const { training, datasetId } = await setup(t);
  const base = {
    organizationId: org,
    datasetId,
    modelName: 'm',
    modelVersion: 'v1',
    modelType: 'SINGLE_LABEL_CLASSIFICATION' as const,
    tags: ['red', 'green'],
  };
  const code = async (p: Promise<unknown>) => (await t.throwsAsync(p)) as { code?: number; message: string };
  t.regex((await code(training.submitTrainingJob({ ...base, tags: [] }))).message, /tags must name at least one label/);
  t.regex((await code(training.submitTrainingJob({ ...base, tags: ['red'] }))).message, /at least two labels/);
  t.regex((await code(training.submitTrainingJob({ ...base, modelType: 'NOPE' as never }))).message, /model_type must be one of/);
  t.regex((await code(training.submitTrainingJob({ ...base, modelVersion: '' }))).message, /model_version is required/);
  t.regex((await code(training.submitTrainingJob({ ...base, modelName: '../x' }))).message, /model_name '..\/x' must be/);
  t.regex((await code(training.submitTrainingJob({ ...base, arguments: { epochs: '0' } }))).message, /arguments.epochs must be >= 1/);
  t.regex((await code(training.submitTrainingJob({ ...base, arguments: { image_size: '60' } }))).message, /multiple of 8/);
  t.regex((await code(training.submitTrainingJob({ ...base, arguments: { momentum: '1' } }))).message, /not an argument of the built-in trainer/);
  const missing = await code(training.submitTrainingJob({ ...base, datasetId: 'no-such-dataset' }));
  t.is(missing.code, status.NOT_FOUND);
  const foreign = await code(training.submitTrainingJob({ ...base, organizationId: 'org-2' }));
  t.is(foreign.code, status.NOT_FOUND);
  const noScript = await code(training.submitCustomTrainingJob(custom(datasetId, 'absent', 'v1')));
  t.is(noScript.code, status.NOT_FOUND);
  t.regex((await code(training.submitCustomTrainingJob(custom(datasetId, 'absent', 'v1', { dataset_file: 'x' })))).message, /set by the service/);
  t.is((await training.listTrainingJobs(org)).length, 0);
});

test('logs come in pages; the token of a finished job ends at the last entry', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  const lines = 'for i in $(seq 1 1200); do echo "line $i"; done\nmkdir -p "$OUT" && echo x > "$OUT/model.pt"\n';
  await upload('chatty', `#!/bin/sh\nfor a in "$@"; do case "$a" in --model_output_directory=*) OUT="\${a#*=}";; esac; done\n${lines}`);
  const id = await training.submitCustomTrainingJob(custom(datasetId, 'chatty', 'v1'));
  const job = await finished(training, id);
  t.is(job.modelFramework, 'PYTORCH');
  const seen: string[] = [];
  let token = '';
  let pages = 0;
  do {
    const page = await training.getTrainingJobLogs(id, token);
    seen.push(...page.logs.map((l) => l.message));
    token = page.nextPageToken;
    pages += 1;
  } while (token);
  t.true(pages >= 3);
  t.true(seen.includes('line 1') && seen.includes('line 1200'));
  t.is(seen.indexOf('line 1200') - seen.indexOf('line 1'), 1199);
  t.regex(((await t.throwsAsync(training.getTrainingJobLogs(id, 'abc'))) as Error).message, /page_token/);
});

test('a running job with no entry left gives an empty next_page_token; its resume token returns only later entries', async (t) => {
  const { training, datasetId, upload } = await setup(t);
  await upload('blocker', blockerScript);
  const id = await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1'));
  await waitFor('the blocker to log', async () => (await training.getTrainingJobLogs(id)).logs.some((l) => l.message === 'blocking'));
  const first = await training.getTrainingJobLogs(id);
  t.is((await training.getTrainingJob(id)).status, 'IN_PROGRESS');
  t.is(first.nextPageToken, '', 'a reader paging until the token is empty ends while the job runs');
  t.is(first.resumePageToken, String(first.logs.length));
  const none = await training.getTrainingJobLogs(id, first.resumePageToken);
  t.deepEqual(none, { logs: [], nextPageToken: '', resumePageToken: first.resumePageToken });
  await training.cancelTrainingJob(id);
  await finished(training, id);
  const later = await training.getTrainingJobLogs(id, first.resumePageToken);
  t.true(later.logs.length > 0);
  t.false(
    later.logs.some((l) => l.message === 'blocking'),
    'only entries appended since',
  );
  t.is(later.resumePageToken, String(first.logs.length + later.logs.length));
});

test('a stop fails the running job with the reason and keeps pending ones for the next start', async (t) => {
  // Where job folders go when the tests run as root (outside the data directory): gone after a stop.
  const jobsFolder = join(tmpdir(), `mltraining-jobs-${process.pid}-${Date.now()}`);
  const { training, datasetId, upload, root, source } = await setup(t, { concurrency: 1, sandbox: { rootJobsFolder: jobsFolder } });
  await upload('blocker', blockerScript);
  await upload('writer', writerScript);
  const running = await training.submitCustomTrainingJob(custom(datasetId, 'blocker', 'v1'));
  const pending = await training.submitCustomTrainingJob(custom(datasetId, 'writer', 'v2'));
  const sleeper = await waitFor('the first job to run', () => jobProcesses(running, 'sleep')[0]);
  await training.stop();
  t.false(isRunning(sleeper));
  t.false(existsSync(jobsFolder));

  const next = new MLTraining({ root, dataSource: source, killGraceMs: 500 });
  await next.start();
  t.teardown(() => next.stop());
  const stopped = await next.getTrainingJob(running);
  t.is(stopped.status, 'FAILED');
  t.is(stopped.errorStatus?.code, status.UNAVAILABLE);
  t.regex(stopped.errorStatus!.message, /the cloud stopped while the job was running/);
  t.is((await finished(next, pending)).status, 'COMPLETED');
});

test('a script past its CPU-time limit fails with RESOURCE_EXHAUSTED', async (t) => {
  const { training, datasetId, upload } = await setup(t, { customLimits: { wallSeconds: 120, cpuSeconds: 1 } });
  await upload('spinner', '#!/bin/sh\nwhile :; do :; done\n');
  const job = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'spinner', 'v1')));
  t.is(job.status, 'FAILED');
  t.is(job.errorStatus?.code, status.RESOURCE_EXHAUSTED);
  t.regex(job.errorStatus!.message, /CPU time limit of 1 s/);
});

test('a script filling its job folder past the limit (bytes or files) is stopped with RESOURCE_EXHAUSTED', async (t) => {
  const { training, datasetId, upload } = await setup(t, {
    customLimits: { wallSeconds: 60 },
    disk: { maxBytes: 4 * 2 ** 20, maxEntries: 500, intervalMs: 100 },
  });
  await upload('filler', '#!/bin/sh\ni=0\nwhile :; do head -c 1048576 /dev/zero > fill$i; i=$((i+1)); sleep 0.05; done\n');
  await upload('spawner', '#!/bin/sh\ni=0\nwhile :; do : > empty$i; i=$((i+1)); done\n');
  const filler = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'filler', 'v1')));
  t.is(filler.status, 'FAILED');
  t.is(filler.errorStatus?.code, status.RESOURCE_EXHAUSTED);
  t.regex(filler.errorStatus!.message, /wrote more than 4194304 bytes to its job folder \(PLATFORM_TRAINING_DISK_MB\) and was stopped/);
  const spawner = await finished(training, await training.submitCustomTrainingJob(custom(datasetId, 'spawner', 'v2')));
  t.is(spawner.errorStatus?.code, status.RESOURCE_EXHAUSTED);
  t.regex(spawner.errorStatus!.message, /more than 500 files and folders in its job folder \(PLATFORM_TRAINING_DISK_FILES\)/);
});
