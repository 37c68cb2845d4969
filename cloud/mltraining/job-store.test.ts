// The job store on both backends (training-tables.ts): snapshots, the create checks, logs, and the
// claims that let a job be run (and completed) once when several processes touch it.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf } from '../testing/tenancy-fixture.js';
import { JobStore } from './job-store.js';
import type { TrainingJob } from './training-job.js';

const backends = tabularBackends(test);

const job = (id: string, modelVersion = id): TrainingJob => ({
  id,
  organizationId: 'org',
  datasetId: 'd',
  modelName: 'm',
  modelVersion,
  isCustomJob: false,
  registryItemId: '',
  registryItemVersion: '',
  status: 'PENDING',
  createdOn: '2024-01-01T00:00:00.000Z',
  lastModified: '2024-01-01T00:00:00.000Z',
  syncedModelId: '',
  tags: ['a'],
  arguments: {},
  validationMetrics: {},
});

for (const backend of backends) {
  const open = async (t: Parameters<typeof backend.open>[0], maxLog?: number) => {
    const store = new JobStore(await backend.open(t), maxLog);
    await store.init();
    return store;
  };

  test(`${backend.name}: saves are ordered, the last snapshot wins; remove takes the job and its log`, async (t) => {
    const store = await open(t);
    await store.create(job('a'), 10);
    const saves = [];
    for (const s of ['IN_PROGRESS', 'CANCELING', 'CANCELED'] as const) saves.push(store.save({ ...job('a'), status: s }));
    await Promise.all(saves);
    t.deepEqual(
      (await store.list('org')).map((j) => [j.id, j.status]),
      [['a', 'CANCELED']],
    );
    t.deepEqual(Object.fromEntries(await store.counts()), { CANCELED: 1 });
    await store.appendLog('a', { level: 'info', time: 't', message: 'x' });
    await store.remove('a');
    t.is(await store.get('a'), undefined);
    t.is((await store.readLog('a')).total, 0);
  });

  test(`${backend.name}: a taken model version is ALREADY_EXISTS; past the pending limit RESOURCE_EXHAUSTED`, async (t) => {
    const store = await open(t);
    t.is(await store.create(job('a', 'v1'), 2), 0);
    t.is(await rejectionCodeOf(store.create(job('b', 'v1'), 2)), status.ALREADY_EXISTS);
    t.is(await store.create(job('c', 'v2'), 2), 1);
    t.is(await rejectionCodeOf(store.create(job('d', 'v3'), 2)), status.RESOURCE_EXHAUSTED);
    t.deepEqual(
      (await store.withStatus(['PENDING'])).map((j) => j.id),
      ['a', 'c'],
    );
  });

  test(`${backend.name}: a log keeps its entries in order and stops at its cap with a notice; pages by position`, async (t) => {
    const tables = await backend.open(t);
    const store = new JobStore(tables, 3);
    await store.init();
    for (let i = 1; i <= 5; i++) void store.appendLog('a', { level: 'info', time: 't', message: `line ${i}` });
    await store.closeLog('a');
    const { entries, total } = await store.readLog('a');
    t.deepEqual(
      entries.map((e) => e.message),
      ['line 1', 'line 2', 'line 3', 'log truncated after 3 entries'],
    );
    t.is(total, 4);
    t.deepEqual(
      (await store.readLog('a', 2, 1)).entries.map((e) => e.message),
      ['line 3'],
    );
    // Another JobStore on the same tables (another process) appending later continues after the last entry.
    const second = new JobStore(tables, 10);
    await second.appendLog('a', { level: 'info', time: 't', message: 'from another process' });
    t.deepEqual(
      (await store.readLog('a', 4)).entries.map((e) => e.message),
      ['from another process'],
    );
  });

  test(`${backend.name}: only the run that claimed a job last may write it; a cancel request's CANCELING stays`, async (t) => {
    const store = await open(t);
    await store.create(job('a'), 10);
    const first = (await store.claim('a', 'run-1', 'q1', false)) as TrainingJob;
    t.is(first.status, 'PENDING');
    t.is((await store.get('a'))?.status, 'IN_PROGRESS');
    t.deepEqual(await store.saveRun({ ...first, status: 'IN_PROGRESS' }, 'run-1'), { status: 'IN_PROGRESS' });
    // Not PENDING any more: a second claim needs takeOver (the first run's process died).
    t.is(await store.claim('a', 'run-2', 'q1', false), undefined);
    t.truthy(await store.claim('a', 'run-2', 'q1', true));
    t.deepEqual(await store.saveRun({ ...first, status: 'COMPLETED' }, 'run-1'), { lost: true });
    t.is((await store.get('a'))?.status, 'IN_PROGRESS');
    t.deepEqual((await store.cancel('a', 'now'))?.job.status, 'CANCELING');
    t.deepEqual(await store.saveRun({ ...first, status: 'IN_PROGRESS' }, 'run-2'), { status: 'CANCELING' });
    t.deepEqual(await store.saveRun({ ...first, status: 'CANCELED' }, 'run-2'), { status: 'CANCELED' });
    // Finished: nothing moves it any more.
    t.deepEqual(await store.saveRun({ ...first, status: 'COMPLETED' }, 'run-2'), { status: 'CANCELED' });
    t.is(await store.claim('a', 'run-3', 'q1', true), undefined);
  });

  test(`${backend.name}: a takeover past maxTakes ends the job FAILED once and starts nothing; a hand-back is not counted`, async (t) => {
    const store = await open(t);
    await store.create(job('a'), 10);
    t.truthy(await store.claim('a', 'run-1', 'q', false, undefined, 2));
    t.is(await store.takes('a'), 1);
    // The worker stopping hands the run back: not counted, and only the owning run may do it.
    await store.handBack('a', 'run-0');
    t.is(await store.takes('a'), 1);
    await store.handBack('a', 'run-1');
    t.is(await store.takes('a'), 0);
    t.truthy(await store.claim('a', 'run-2', 'q', true, undefined, 2));
    t.truthy(await store.claim('a', 'run-3', 'q', true, undefined, 2));
    t.is(await store.takes('a'), 2);
    // Both runs' workers died: the next takeover fails the job instead of starting it, and only once.
    t.is(await store.claim('a', 'run-4', 'q', true, undefined, 2), 'taken-too-often');
    const failed = await store.get('a');
    t.is(failed?.status, 'FAILED');
    t.deepEqual(failed?.errorStatus, {
      code: status.INTERNAL,
      message: "the job's worker stopped 2 times while running it (PLATFORM_TRAINING_JOB_MAX_TAKES=2); it is not started again",
    });
    t.truthy(failed?.trainingEnded);
    t.is(await store.claim('a', 'run-5', 'q', true, undefined, 2), undefined);
    t.deepEqual(await store.saveRun({ ...job('a'), status: 'COMPLETED' }, 'run-3'), { lost: true }, 'the last run writes nothing more');
    t.is(await store.takes('a'), 2);
    // A job being canceled is taken over all the same: its run ends it CANCELED without starting anything.
    await store.create(job('b'), 10);
    t.truthy(await store.claim('b', 'run-1', 'q', false, undefined, 1));
    await store.cancel('b', 'now');
    t.is(((await store.claim('b', 'run-2', 'q', true, undefined, 1)) as TrainingJob).status, 'CANCELING');
  });

  test(`${backend.name}: a claim with a per-organization limit is 'busy' while the organization runs that many`, async (t) => {
    const store = await open(t);
    await store.create(job('a'), 10);
    await store.create(job('b'), 10);
    await store.create({ ...job('c'), organizationId: 'other' }, 10);
    t.truthy(await store.claim('a', 'run-a', 'q', false, 1));
    t.is(await store.claim('b', 'run-b', 'q', false, 1), 'busy');
    t.is((await store.get('b'))?.status, 'PENDING');
    t.truthy(await store.claim('c', 'run-c', 'q', false, 1));
    t.deepEqual((await store.owned()).map((o) => o.id).sort(), ['a', 'c']);
    await store.saveRun({ ...job('a'), status: 'COMPLETED' }, 'run-a');
    t.truthy(await store.claim('b', 'run-b', 'q', false, 1));
  });

  test(`${backend.name}: cancel makes a PENDING job CANCELED at once and leaves a finished one alone`, async (t) => {
    const store = await open(t);
    await store.create(job('a'), 10);
    const canceled = await store.cancel('a', '2024-01-02T00:00:00.000Z');
    t.is(canceled?.before, 'PENDING');
    t.is((await store.get('a'))?.status, 'CANCELED');
    t.is(await store.claim('a', 'run-1', '', false), undefined);
    t.is((await store.cancel('a', 'later'))?.before, 'CANCELED');
    t.is(await store.cancel('nope', 'now'), undefined);
  });
}

test('duckdb: a data directory made before the takes column gets it; its jobs are claimed and counted', async (t) => {
  const tables = await backends[0].open(t);
  // The table as earlier versions made it, with a job in it.
  await tables.execute(`CREATE TABLE training_jobs (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, model_name VARCHAR NOT NULL, model_version VARCHAR NOT NULL,
     status VARCHAR NOT NULL, created_on TIMESTAMPTZ NOT NULL, run_token VARCHAR NOT NULL, queue_job_id VARCHAR NOT NULL,
     job VARCHAR NOT NULL)`);
  await tables.execute('INSERT INTO training_jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    'old',
    'org',
    'm',
    'old',
    'PENDING',
    new Date(),
    '',
    '',
    JSON.stringify(job('old')),
  ]);
  const store = new JobStore(tables);
  await store.init();
  t.is(await store.takes('old'), 0);
  t.truthy(await store.claim('old', 'run-1', '', false));
  t.is(await store.takes('old'), 1);
  await store.create(job('new'), 10);
  t.is(await store.takes('new'), 0);
});
