import test from 'ava';
import { status } from '@grpc/grpc-js';
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { MingoPool } from '../mql/mingo-pool.js';
import { MqlRunner } from '../mql/mql-runner.js';
import { PipelineStore } from './pipeline-store.js';
import { PipelineScheduler } from './pipeline-scheduler.js';
import { StatusError } from '../../../core/serving/status-error.js';

let fx: TabularFixture;
let pool: MingoPool;
let store: PipelineStore;
let mql: MqlRunner;
let scheduler: PipelineScheduler;
const at = (hhmm: string) => new Date(`2026-05-01T${hhmm}:00Z`);
const GROUP = [{ $group: { _id: '$component_name', n: { $sum: 1 }, avg: { $avg: '$data.readings.v' } } }, { $sort: { _id: 1 } }];

test.before(async () => {
  fx = await createTabularFixture();
  await fx.insert([
    { organization_id: 'org-a', component_name: 'thermo', time_received: at('09:59'), data: { readings: { v: 1 } } },
    { organization_id: 'org-a', component_name: 'thermo', time_received: at('10:30'), data: { readings: { v: 10 } } },
    { organization_id: 'org-a', component_name: 'thermo', time_received: at('10:45'), data: { readings: { v: 20 } } },
    { organization_id: 'org-a', component_name: 'hygro', time_received: at('11:15'), data: { readings: { v: 5 } } },
    { organization_id: 'org-b', component_name: 'thermo', time_received: at('10:30'), data: { readings: { v: 99 } } },
  ]);
  pool = new MingoPool({ threads: 1 });
  store = new PipelineStore(fx.store);
  await store.init();
  mql = new MqlRunner(fx.connect, pool, (org, id) => store.readSink(org, id), { limits: { timeoutMs: 120_000 } });
  scheduler = new PipelineScheduler(store, mql);
});
test.after.always(async () => {
  await pool.close();
  await fx.close();
});

test.serial('each scheduled window runs once and appends its results to the sink', async (t) => {
  const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages: GROUP, schedule: '0 * * * *' }, at('10:07'));
  t.deepEqual(p.windowEnd, at('10:00'));
  await scheduler.runDue(at('10:59'));
  t.deepEqual(await store.readSink('org-a', p.id), [], 'no window has ended yet');
  await scheduler.runDue(at('11:00'));
  t.deepEqual(await store.readSink('org-a', p.id), [{ _id: 'thermo', n: 2, avg: 15 }]);
  await scheduler.runDue(at('11:00'));
  t.is((await store.runs(p.id)).length, 1, 'running again for the same time does nothing');
  await scheduler.runDue(at('12:30'));
  t.deepEqual(await store.readSink('org-a', p.id), [
    { _id: 'thermo', n: 2, avg: 15 },
    { _id: 'hygro', n: 1, avg: 5 },
  ]);
  const runs = await store.runs(p.id);
  t.deepEqual(
    runs.map((r) => [r.status, r.dataStart.toISOString(), r.dataEnd.toISOString(), r.documents]),
    [
      ['COMPLETED', at('11:00').toISOString(), at('12:00').toISOString(), 1],
      ['COMPLETED', at('10:00').toISOString(), at('11:00').toISOString(), 1],
    ],
  );
  t.deepEqual((await store.get(p.id)).windowEnd, at('12:00'));

  const viaMql = await mql.run('org-a', [{ $match: { n: { $gte: 2 } } }], { sourceType: 'PIPELINE_SINK', pipelineId: p.id });
  t.deepEqual(viaMql, [{ _id: 'thermo', n: 2, avg: 15 }]);
  const other = await t.throwsAsync(mql.run('org-b', [{ $match: {} }], { sourceType: 'PIPELINE_SINK', pipelineId: p.id }), { instanceOf: StatusError });
  t.is(other!.code, status.NOT_FOUND);
});

test.serial('a run that fails is recorded as FAILED and the next window still runs', async (t) => {
  const p = await store.create(
    { organizationId: 'org-a', name: 'broken', stages: [{ $group: { total: { $sum: 1 } } }], schedule: '*/30 * * * *' },
    at('10:10'),
  );
  await scheduler.runDue(at('10:31'));
  const [run] = await store.runs(p.id);
  t.is(run.status, 'FAILED');
  t.regex(run.errorMessage, /_id/);
  t.deepEqual((await store.get(p.id)).windowEnd, at('10:30'));
  await store.delete(p.id);
});

test.serial('a failed window is retried after its backoff and its results then land in the sink; the progress never moves back', async (t) => {
  // Issue 27, finding 8: a window that failed for a passing reason (here the memory guard, as after another
  // tenant inflated the process) used to stay FAILED for good.
  let failures = 1;
  const flaky: Pick<MqlRunner, 'run'> = {
    run: (...args: Parameters<MqlRunner['run']>) => {
      if (failures-- > 0) return Promise.reject(new StatusError(status.RESOURCE_EXHAUSTED, "query: the service's memory passed its 1280 MiB limit"));
      return mql.run(...args);
    },
  };
  const retrying = new PipelineScheduler(store, flaky, { retries: 2, retryBackoffMs: 60_000 });
  const p = await store.create({ organizationId: 'org-a', name: 'retried', stages: GROUP, schedule: '0 * * * *' }, at('10:07'));
  await retrying.runDue(at('11:00'));
  let runs = await store.runs(p.id);
  t.deepEqual(
    runs.map((r) => r.status),
    ['FAILED'],
  );
  t.regex(runs[0].errorMessage, /memory passed its 1280 MiB limit \(attempt 1 of 3; retried from 2026-05-01T11:01:00.000Z\)/);
  t.deepEqual(await store.readSink('org-a', p.id), []);
  await retrying.runDue(new Date(at('11:00').getTime() + 30_000));
  t.is((await store.runs(p.id)).length, 1, 'not before its backoff');
  await retrying.runDue(at('11:01'));
  runs = await store.runs(p.id);
  t.deepEqual(
    runs.map((r) => [r.status, r.dataStart.toISOString(), r.dataEnd.toISOString()]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    [
      ['COMPLETED', at('10:00').toISOString(), at('11:00').toISOString()],
      ['FAILED', at('10:00').toISOString(), at('11:00').toISOString()],
    ].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  );
  t.deepEqual(await store.readSink('org-a', p.id), [{ _id: 'thermo', n: 2, avg: 15 }]);
  // The next hour's window runs as usual, then the retried one is not run again.
  await retrying.runDue(at('12:00'));
  t.deepEqual(await store.readSink('org-a', p.id), [
    { _id: 'thermo', n: 2, avg: 15 },
    { _id: 'hygro', n: 1, avg: 5 },
  ]);
  await retrying.runDue(at('12:30'));
  t.is((await store.runs(p.id)).length, 3);
  t.deepEqual((await store.get(p.id)).windowEnd, at('12:00'));
  await store.delete(p.id);
  t.deepEqual(await fx.store.query(`SELECT * FROM query_data_pipeline_retries WHERE pipeline_id = '${p.id}'`), []);
});

test.serial('a window that keeps failing is tried a bounded number of times, with doubling waits', async (t) => {
  const retrying = new PipelineScheduler(store, mql, { retries: 2, retryBackoffMs: 60_000 });
  // Fails every time: $group needs an _id.
  const p = await store.create(
    { organizationId: 'org-a', name: 'always-broken', stages: [{ $group: { total: { $sum: 1 } } }], schedule: '0 * * * *' },
    at('10:07'),
  );
  const minute = (m: number) => new Date(at('11:00').getTime() + m * 60_000);
  const attemptsOfFirstWindow = async () => (await store.runs(p.id)).filter((r) => r.dataEnd.getTime() === at('11:00').getTime());
  await retrying.runDue(minute(0));
  await retrying.runDue(minute(1)); // first retry: 60 s after the first attempt
  t.is((await attemptsOfFirstWindow()).length, 2);
  await retrying.runDue(minute(2)); // the second waits 120 s
  t.is((await attemptsOfFirstWindow()).length, 2);
  await retrying.runDue(minute(3));
  const attempts = await attemptsOfFirstWindow();
  t.is(attempts.length, 3);
  t.true(attempts.every((r) => r.status === 'FAILED'));
  t.true(
    attempts.some((r) => /\(attempt 3 of 3; not retried\)$/.test(r.errorMessage)),
    attempts.map((r) => r.errorMessage).join(' | '),
  );
  await retrying.runDue(minute(59)); // long after: no fourth attempt
  t.is((await attemptsOfFirstWindow()).length, 3);
  await store.delete(p.id);
});

test.serial('a pipeline whose stored stages cannot be read gets a FAILED run with the error, and the other pipelines still run', async (t) => {
  const broken = await store.create({ organizationId: 'org-a', name: 'corrupt', stages: [{ $count: 'n' }], schedule: '0 * * * *' }, at('10:05'));
  const good = await store.create({ organizationId: 'org-a', name: 'fine', stages: [{ $count: 'n' }], schedule: '0 * * * *' }, at('10:06'));
  await fx.store.execute(`UPDATE query_data_pipelines SET mql = '[{"$count": ' WHERE id = ?`, [broken.id]);
  await scheduler.runDue(at('11:00'));
  const [run] = await store.runs(broken.id);
  t.is(run.status, 'FAILED');
  t.regex(run.errorMessage, /stored stages cannot be read/);
  t.deepEqual(await store.readSink('org-a', good.id), [{ n: 2 }]);
  await store.delete(broken.id);
  await store.delete(good.id);
});

test.serial('disabled pipelines do not run; re-enabling starts from the current window', async (t) => {
  const p = await store.create({ organizationId: 'org-a', name: 'toggled', stages: [{ $count: 'n' }], schedule: '0 * * * *' }, at('09:30'));
  await store.setEnabled(p.id, false, at('09:40'));
  await scheduler.runDue(at('11:30'));
  t.deepEqual(await store.runs(p.id), []);
  await store.setEnabled(p.id, true, at('11:30'));
  await scheduler.runDue(at('12:00'));
  t.deepEqual(
    (await store.runs(p.id)).map((r) => r.dataStart.toISOString()),
    [at('11:00').toISOString()],
  );
  t.deepEqual(await store.readSink('org-a', p.id), [{ n: 1 }]);
  await store.delete(p.id);
});

test.serial('list, and delete removes the pipeline, its runs and its sink', async (t) => {
  const p = await store.create({ organizationId: 'org-b', name: 'b-counts', stages: [{ $count: 'n' }], schedule: '0 * * * *' }, at('10:00'));
  t.deepEqual(
    (await store.list('org-b')).map((x) => x.name),
    ['b-counts'],
  );
  await scheduler.runDue(at('11:00'));
  t.deepEqual(await store.readSink('org-b', p.id), [{ n: 1 }]);
  await store.delete(p.id);
  t.deepEqual(await store.list('org-b'), []);
  await t.throwsAsync(store.readSink('org-b', p.id), { message: /no data pipeline/ });
  t.deepEqual(await fx.store.query(`SELECT * FROM query_data_pipeline_sink WHERE pipeline_id = '${p.id}'`), []);
  t.deepEqual(await fx.store.query(`SELECT * FROM query_data_pipeline_runs WHERE pipeline_id = '${p.id}'`), []);
  const err = await t.throwsAsync(store.delete(p.id), { instanceOf: StatusError });
  t.is(err!.code, status.NOT_FOUND);
});

test.serial('creation checks name, stages, schedule and source', async (t) => {
  const base = { organizationId: 'org-a', name: 'x', stages: [{ $count: 'n' }], schedule: '0 * * * *' };
  for (const [bad, re, code] of [
    [{ name: '' }, /name: must be 1 to 100 characters/, status.INVALID_ARGUMENT],
    [{ stages: [{ $lookup: {} }] }, /stage \$lookup is not allowed/, status.INVALID_ARGUMENT],
    [{ schedule: 'every hour' }, /schedule: must be a 5-field cron expression/, status.INVALID_ARGUMENT],
    [{ schedule: '61 * * * *' }, /schedule: /, status.INVALID_ARGUMENT],
    [{ sourceType: 'PIPELINE_SINK' }, /data_source_type: must be STANDARD or HOT_STORAGE/, status.INVALID_ARGUMENT],
    [{ name: 'hourly' }, /already exists/, status.ALREADY_EXISTS],
  ] as [Record<string, unknown>, RegExp, number][]) {
    const err = await t.throwsAsync(store.create({ ...base, ...bad } as never), { instanceOf: StatusError });
    t.is(err!.code, code, String(re));
    t.regex(err!.message, re);
  }
});
