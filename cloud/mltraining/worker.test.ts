// The scale-out training queue with real processes (issue 33, "Must show"): two `platform-cloud worker`
// processes (the real program, cloud/server/main.ts) on one PostgreSQL and one S3 (s3rver). A
// custom job is submitted through the training service as a scale-out `serve` runs it (jobs to the
// pg-boss queue); the worker that picks it is killed with kill -9 while its trainer runs, and the
// other worker runs the job again and completes it exactly once: one COMPLETED job, one stored model,
// the files of one artefact in S3. The workers run with PLATFORM_TRAINING_JOB_MAX_TAKES=2: one kill is
// taken over, a hand-back (SIGTERM) is not counted, and a job whose every worker is killed ends FAILED
// after its second take instead of going round the workers forever.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type PgBoss from 'pg-boss';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { insertBinary } from '../datasync/ingest.js';
import type { PgStore } from '../store/pg-store.js';
import { startScaleOutBackends, type ScaleOutBackends } from '../testing/scale-out.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { CloudTrainingDataSource } from './cloud-data-source.js';
import { MLTraining } from './ml-training.js';
import { scriptPackage } from './testing/script-package.js';
import { shapeImages } from './testing/shapes.js';
import { BossTrainingDispatch, openBoss } from './worker-queue.js';

const main = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const org = 'org-scale-out';

// Prints a line the test waits for, then takes long enough to be killed in the middle, then writes a model.
const slowWriter = `#!/bin/sh
for a in "$@"; do case "$a" in --model_output_directory=*) OUT="\${a#*=}" ;; esac; done
echo "training started"
sleep 4
printf 'fake-onnx' > "$OUT/model.onnx"
echo "wrote the model"
`;

let backends: ScaleOutBackends;
let tables: PgStore;
let boss: PgBoss;
let api: MLTraining;
const scratch: string[] = [];
const workers: ServingProgram[] = [];

test.before(async () => {
  backends = await startScaleOutBackends();
  tables = await backends.openTables();
  boss = await openBoss(backends.backendStoreUri, { supervise: false });
  // The training service as a scale-out `serve` runs it: submitted jobs go to the queue.
  scratch.push(tempDataDir());
  api = new MLTraining({
    root: scratch[0],
    store: tables,
    dataSource: new CloudTrainingDataSource(tables),
    dispatch: new BossTrainingDispatch(boss),
    runsNoJobs: true,
    killGraceMs: 500,
  });
  await api.start();
});

test.after.always(async () => {
  for (const w of workers) await w.stop();
  await api?.stop();
  await boss?.stop({ graceful: false, wait: true });
  await backends?.stop();
  for (const dir of scratch) removeDataDir(dir);
});

async function startWorker(): Promise<ServingProgram> {
  const dir = tempDataDir();
  scratch.push(dir);
  const worker = await spawnServing(main, ['worker', ...backends.args, '--data-dir', dir], {
    name: 'platform-cloud worker',
    nodeFlags: ['--import', 'tsx'],
    servingLine: /platform-cloud worker running (.+)/,
    env: { ...process.env, ...backends.env, PLATFORM_TRAINING_CONCURRENCY: '1', PLATFORM_TRAINING_JOB_MAX_TAKES: '2' },
  });
  workers.push(worker);
  return worker;
}

/** A dataset of a few shape images, uploaded as DataSync stores them. */
async function dataset(): Promise<string> {
  const id = randomUUID();
  await tables.execute('INSERT INTO datasets VALUES (?, ?, ?, ?)', [id, `shapes-${id.slice(0, 8)}`, org, new Date()]);
  const part = {
    kind: 'part' as const,
    partId: 'part-1',
    machineId: 'machine-1',
    locationId: 'location-1',
    organizationId: org,
    partName: 'p',
    robotName: 'r',
  };
  for (const image of shapeImages(4)) {
    const now = new Date();
    await insertBinary(tables, {
      part,
      componentType: 'rdk:component:camera',
      componentName: 'cam',
      methodName: 'ReadImage',
      tags: image.labels,
      fileName: 'shape.png',
      fileExtension: '.png',
      mimeType: 'image/png',
      datasetIds: [id],
      timeRequested: now,
      timeReceived: now,
      content: image.png,
    });
  }
  return id;
}

/** Registry items this file has uploaded, each as version 1.0.0. */
const registered = new Set<string>();

/** Submits a custom job of `script` (registered as `item` on first use) on a new dataset; its id and a reader of its log. */
async function submitScriptJob(item: string, script: string, modelVersion: string): Promise<{ id: string; logs: () => Promise<string[]> }> {
  if (!registered.has(item)) {
    await api.registry.upload({
      organizationId: org,
      registryItemId: item,
      version: '1.0.0',
      entrypoint: 'train.sh',
      package: await scriptPackage({ 'train.sh': { content: script, mode: 0o755 } }),
    });
    registered.add(item);
  }
  const id = await api.submitCustomTrainingJob({
    organizationId: org,
    datasetId: await dataset(),
    registryItemId: item,
    registryItemVersion: '1.0.0',
    modelName: 'm',
    modelVersion,
  });
  return { id, logs: async () => (await api.getTrainingJobLogs(id)).logs.map((l) => l.message) };
}

test.serial('a job whose worker is killed with kill -9 completes exactly once on another worker', async (t) => {
  const [first, second] = [await startWorker(), await startWorker()];
  const { id, logs } = await submitScriptJob('slow-writer', slowWriter, 'v1');
  // The worker that picked it names itself in the log; its trainer has started.
  const runner = await waitFor('a worker to start the trainer', async () => {
    const lines = await logs();
    return lines.includes('training started') && lines.find((l) => l.startsWith('run by worker '));
  });
  const victim = [first, second].find((w) => runner.endsWith(`:${w.child.pid}`));
  t.truthy(victim, `${runner} is one of the two workers`);
  const survivor = victim === first ? second : first;
  await victim!.kill9();

  const job = await waitFor(
    'the job to end',
    async () => {
      const j = await api.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status) && j;
    },
    120_000,
  );
  const lines = await logs();
  t.is(job.status, 'COMPLETED', `${JSON.stringify(job.errorStatus)}\n${lines.join('\n')}`);
  t.true(lines.includes(`run by worker ${runner.slice('run by worker '.length).replace(/:\d+$/, '')}:${survivor.child.pid}`), lines.join('\n'));
  t.true(lines.some((l) => l.includes('the worker that ran this job stopped before the job ended')));
  t.is(lines.filter((l) => l === 'wrote the model').length, 1, 'the trainer finished once');
  // Exactly once: one job row, COMPLETED, naming the one stored model of that version.
  const models = await tables.query('SELECT id FROM training_models WHERE organization_id = ? AND model_name = ? AND model_version = ?', [org, 'm', 'v1']);
  t.deepEqual(
    models.map((m) => m.id),
    [job.syncedModelId],
  );
  t.deepEqual(await tables.query('SELECT status, takes FROM training_jobs WHERE id = ?', [id]), [{ status: 'COMPLETED', takes: 2 }]);
  const keys: string[] = [];
  for await (const blob of tables.blobs.list!(`mltraining/models/${org}/`)) keys.push(blob.key);
  t.deepEqual(keys, [`mltraining/models/${org}/${job.syncedModelId}/model.onnx`]);
  t.is((await api.artefacts.readFile(org, 'm', 'v1', 'model.onnx')).toString(), 'fake-onnx');
});

test.serial('a worker stopped with SIGTERM hands its running job back; another worker completes it once', async (t) => {
  await startWorker();
  const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  t.true(alive.length >= 2);
  const { id, logs } = await submitScriptJob('slow-writer', slowWriter, 'v2');
  const runner = await waitFor('a worker to start the trainer', async () => {
    const lines = await logs();
    return lines.includes('training started') && lines.find((l) => l.startsWith('run by worker '));
  });
  const stopping = alive.find((w) => runner.endsWith(`:${w.child.pid}`))!;
  t.is(await stopping.stop(), 0, 'the worker exits cleanly');
  const job = await waitFor(
    'the job to end',
    async () => {
      const j = await api.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status) && j;
    },
    120_000,
  );
  const lines = await logs();
  t.is(job.status, 'COMPLETED', lines.join('\n'));
  t.true(lines.includes('the worker running the job is stopping; another worker runs it again'), lines.join('\n'));
  t.is(lines.filter((l) => l.startsWith('run by worker ')).length, 2);
  t.is(await api.jobs.takes(id), 1, 'the hand-back is not counted as a take');
  // Each worker's own log says which jobs it ran and how they left it.
  t.regex(stopping.output(), new RegExp(`"jobId":"${id}".*"msg":"training job started on this worker"`));
  // The line follows the job's end state, which the API may show first.
  const left = `"jobId":"${id}","status":"COMPLETED","msg":"training job left this worker"`;
  const finisher = await waitFor('the finishing worker to log the job', async () => alive.find((w) => w !== stopping && w.output().includes(left)));
  t.truthy(finisher);
  const models = await tables.query('SELECT id FROM training_models WHERE organization_id = ? AND model_name = ? AND model_version = ?', [org, 'm', 'v2']);
  t.deepEqual(
    models.map((m) => m.id),
    [job.syncedModelId],
  );
});

// Starts and prints a line, then runs until its worker is killed (bubblewrap ends it with its worker).
const stuck = `#!/bin/sh
echo "training started"
sleep 60
`;

test.serial('a job whose every worker is killed with kill -9 ends FAILED after PLATFORM_TRAINING_JOB_MAX_TAKES takes, and is not started again', async (t) => {
  // Only the workers started here take the job: the others hand theirs back and leave.
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) await w.stop();
  const { id, logs } = await submitScriptJob('stuck', stuck, 'v3');
  const runs = (lines: string[]) => lines.filter((l) => l.startsWith('run by worker '));
  // Two takes, each by the one live worker, each killed while its trainer runs.
  for (let take = 1; take <= 2; take++) {
    const worker = await startWorker();
    await waitFor(`take ${take} to start the trainer`, async () => {
      const lines = await logs();
      return lines.filter((l) => l === 'training started').length === take && runs(lines).length === take;
    });
    t.true(runs(await logs())[take - 1].endsWith(`:${worker.child.pid}`));
    await worker.kill9();
  }
  // Two workers may take it now: whichever takes it over ends it FAILED, once, and runs nothing.
  const last = [await startWorker(), await startWorker()];
  const job = await waitFor('the job to end or be started a third time', async () => {
    const j = await api.getTrainingJob(id);
    return (j.status !== 'IN_PROGRESS' || runs(await logs()).length > 2) && j;
  });
  const message = "the job's worker stopped 2 times while running it (PLATFORM_TRAINING_JOB_MAX_TAKES=2); it is not started again";
  // The claim commits FAILED; the worker that made it appends the log line just after, so the API may
  // show the status first.
  const lines = await waitFor("the failed job's log line", async () => {
    const now = await logs();
    return (now.includes(`training failed: ${message}`) || job.status !== 'FAILED') && now;
  });
  t.is(job.status, 'FAILED', lines.join('\n'));
  t.deepEqual(job.errorStatus, { code: 13, message });
  t.is(runs(lines).length, 2, lines.join('\n'));
  t.is(lines.filter((l) => l === `training failed: ${message}`).length, 1, lines.join('\n'));
  t.is(await api.jobs.takes(id), 2);
  const failer = await waitFor('a worker to log the failed job', () =>
    last.find((w) => w.output().includes(`"jobId":"${id}","msg":"training job FAILED, not started`)),
  );
  t.truthy(failer);
  // The other live worker is idle and nothing takes the job again: it stays FAILED, never started a third time.
  for (const w of last) t.false(w.output().includes(`"jobId":"${id}","msg":"training job started on this worker"`));
  t.is((await api.getTrainingJob(id)).status, 'FAILED');
});
