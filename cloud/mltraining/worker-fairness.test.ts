// Issue 27's fairness across organizations (finding 9) in the scale-out mode (issue 33): jobs go
// through the pg-boss queue to a TrainingWorker, here in the test's own process on a PostgreSQL of its
// own. With one slot, another organization's job runs after at most one job of a flooding
// organization, never behind its whole line (the queue's priorities); with two slots, one
// organization still runs one job at a time (the per-organization limit, checked in the claim).
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type PgBoss from 'pg-boss';
import { waitFor } from '../../core/serving/testing/eventually.js';
import type { PgStore } from '../store/pg-store.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { MLTraining, type MLTrainingOptions } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { scriptPackage } from './testing/script-package.js';
import { shapeImages } from './testing/shapes.js';
import type { TrainingJob } from './training-job.js';
import { TrainingWorker } from './worker.js';
import { BossTrainingDispatch, openBoss } from './worker-queue.js';

const [, postgres] = tabularBackends(test);

const quick = `#!/bin/sh
for a in "$@"; do case "$a" in --model_output_directory=*) OUT="\${a#*=}" ;; esac; done
sleep 1
printf 'm' > "$OUT/model.onnx"
`;

async function setup(t: Parameters<typeof postgres.open>[0], slots: number, runner: Partial<MLTrainingOptions> = {}) {
  const tables = (await postgres.open(t)) as PgStore;
  const source = new MemoryDataSource();
  const datasets = { 'org-a': source.addShapes('org-a', shapeImages(2)), 'org-b': source.addShapes('org-b', shapeImages(2)) };
  const roots = [await mkdtemp(join(tmpdir(), 'fair-api-')), await mkdtemp(join(tmpdir(), 'fair-worker-'))];
  const bosses: PgBoss[] = [await openBoss(tables.url, { supervise: false }), await openBoss(tables.url, { supervise: true })];
  // The API as a scale-out serve runs it (no job here), the other as a worker's.
  const api = new MLTraining({ root: roots[0], store: tables, dataSource: source, dispatch: new BossTrainingDispatch(bosses[0]), runsNoJobs: true });
  const runs = new MLTraining({
    root: roots[1],
    store: tables,
    dataSource: source,
    dispatch: new BossTrainingDispatch(bosses[1]),
    killGraceMs: 500,
    ...runner,
  });
  await api.start();
  await runs.start();
  const worker = new TrainingWorker({ url: tables.url, training: runs, boss: bosses[1], slots, perOrganization: 1, pollMs: 200 });
  t.teardown(async () => {
    await worker.stop();
    await api.stop();
    for (const boss of bosses) await boss.stop({ graceful: false, wait: true });
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });
  for (const org of ['org-a', 'org-b'] as const) {
    await api.registry.upload({
      organizationId: org,
      registryItemId: 'quick',
      version: '1',
      entrypoint: 'train.sh',
      package: await scriptPackage({ 'train.sh': { content: quick, mode: 0o755 } }),
    });
  }
  const submit = (org: 'org-a' | 'org-b', version: string) =>
    api.submitCustomTrainingJob({
      organizationId: org,
      datasetId: datasets[org],
      registryItemId: 'quick',
      registryItemVersion: '1',
      modelName: 'm',
      modelVersion: version,
    });
  const allDone = (ids: string[]) =>
    waitFor(
      'every job to end',
      async () => {
        const jobs = await Promise.all(ids.map((id) => api.getTrainingJob(id)));
        return jobs.every((j) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(j.status)) && jobs;
      },
      120_000,
    );
  return { worker, submit, allDone };
}

const started = (j: TrainingJob) => Date.parse(j.trainingStarted!);
const ended = (j: TrainingJob) => Date.parse(j.trainingEnded!);

test('one slot: another organization goes after one job of a flooding organization, not behind its line', async (t) => {
  const { worker, submit, allDone } = await setup(t, 1);
  const ids = [await submit('org-a', 'a1'), await submit('org-a', 'a2'), await submit('org-a', 'a3'), await submit('org-b', 'b1')];
  worker.start();
  const [a1, a2, a3, b1] = await allDone(ids);
  t.deepEqual(
    [a1, a2, a3, b1].map((j) => j.status),
    ['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED'],
  );
  const order = [
    ['a1', a1],
    ['a2', a2],
    ['a3', a3],
    ['b1', b1],
  ]
    .sort((x, y) => started(x[1] as TrainingJob) - started(y[1] as TrainingJob))
    .map((x) => x[0]);
  t.deepEqual(order, ['a1', 'b1', 'a2', 'a3']);
});

test('two slots: an organization runs one job at a time across the workers; the other slot serves another', async (t) => {
  const { worker, submit, allDone } = await setup(t, 2);
  const ids = [await submit('org-a', 'a1'), await submit('org-a', 'a2'), await submit('org-b', 'b1')];
  worker.start();
  const [a1, a2, b1] = await allDone(ids);
  t.true(started(a2) >= ended(a1), 'the second job of org-a started after its first ended');
  t.true(started(b1) < ended(a1), 'org-b ran beside org-a');
});

test('a serve process accepts a custom job without bubblewrap of its own; a worker without it fails the job, never runs it unconfined', async (t) => {
  const { worker, submit, allDone } = await setup(t, 1, { sandbox: { bwrapPath: '/nonexistent/bwrap' } });
  const id = await submit('org-a', 'a1');
  worker.start();
  const [job] = await allDone([id]);
  t.is(job.status, 'FAILED');
  t.is(job.errorStatus?.code, 9); // FAILED_PRECONDITION
  t.regex(job.errorStatus!.message, /training needs confinement \(bubblewrap\) and it is unavailable here/);
});
