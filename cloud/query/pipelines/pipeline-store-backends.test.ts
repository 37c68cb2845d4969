// Data pipelines on both TabularStore backends (issue 33): the store's rules, the scheduler's windows
// and retries with a stand-in for the query engine (the engine is the SQL/MQL tests' subject), two
// schedulers overlapping on one database recording each window once, and the election that lets one
// process of the scale-out mode make the passes.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { waitFor } from '../../../core/serving/testing/eventually.js';
import type { PgStore } from '../../store/pg-store.js';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { rejectionCodeOf } from '../../testing/tenancy-fixture.js';
import { PipelineScheduler } from './pipeline-scheduler.js';
import { PipelineStore } from './pipeline-store.js';
import { WindowRunner, type PipelineWindow } from './pipeline-window.js';

const backends = tabularBackends(test);
const at = (hhmm: string) => new Date(`2026-05-01T${hhmm}:00Z`);
const stages = [{ $group: { _id: '$component_name', n: { $sum: 1 } } }];

/** Stands in for MqlRunner: one document per window, naming the window's start as a Date. */
const windows = {
  calls: 0,
  async run(_org: string, s: Record<string, unknown>[]) {
    this.calls++;
    const match = s[0] as { $match: { time_received: { $gte: Date } } };
    return [{ from: match.$match.time_received.$gte, n: 1 }];
  },
};

for (const backend of backends) {
  const open = async (t: Parameters<typeof backend.open>[0]) => {
    const store = new PipelineStore(await backend.open(t));
    await store.init();
    return store;
  };

  test(`${backend.name}: create, name clash, list, disable and re-enable, delete`, async (t) => {
    const store = await open(t);
    const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('10:07'));
    t.deepEqual(p.windowEnd, at('10:00'));
    t.is(await rejectionCodeOf(store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' })), status.ALREADY_EXISTS);
    await store.create({ organizationId: 'org-b', name: 'hourly', stages, schedule: '0 * * * *' });
    t.deepEqual(
      (await store.list('org-a')).map((x) => [x.name, x.stages, x.enabled]),
      [['hourly', stages, true]],
    );
    await store.setEnabled(p.id, false, at('12:30'));
    t.is((await store.listEnabled()).length, 1);
    await store.setEnabled(p.id, true, at('15:10'));
    t.deepEqual((await store.get(p.id)).windowEnd, at('15:00'), 're-enabled from the current window');
    await store.delete(p.id);
    t.is(await rejectionCodeOf(store.get(p.id)), status.NOT_FOUND);
  });

  test(`${backend.name}: each window runs once, its documents reach the sink in order with their types`, async (t) => {
    const store = await open(t);
    const scheduler = new PipelineScheduler(store, windows);
    const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('10:07'));
    await scheduler.runDue(at('12:30'));
    await scheduler.runDue(at('12:30'));
    t.deepEqual(await store.readSink('org-a', p.id), [
      { from: at('10:00'), n: 1 },
      { from: at('11:00'), n: 1 },
    ]);
    t.deepEqual(
      (await store.runs(p.id)).map((r) => [r.status, r.dataEnd, r.documents]),
      [
        ['COMPLETED', at('12:00'), 1],
        ['COMPLETED', at('11:00'), 1],
      ],
    );
    t.is(await rejectionCodeOf(store.readSink('org-b', p.id)), status.NOT_FOUND);
  });

  test(`${backend.name}: a failed window is retried after its backoff and then completes`, async (t) => {
    const store = await open(t);
    let fail = true;
    const flaky = { run: async (org: string, s: Record<string, unknown>[]) => (fail ? Promise.reject(new Error('no admission turn')) : windows.run(org, s)) };
    const scheduler = new PipelineScheduler(store, flaky, { retries: 2, retryBackoffMs: 60_000 });
    const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('10:07'));
    await scheduler.runDue(at('11:00'));
    t.deepEqual((await store.dueRetries(p.id, at('11:01'), 10)).length, 1);
    fail = false;
    await scheduler.runDue(new Date(at('11:00').getTime() + 30_000));
    t.is((await store.runs(p.id)).length, 1, 'not before its backoff');
    await scheduler.runDue(at('11:01'));
    t.deepEqual((await store.runs(p.id)).map((r) => r.status).sort(), ['COMPLETED', 'FAILED']);
    t.deepEqual(await store.dueRetries(p.id, at('23:00'), 10), []);
    t.deepEqual(await store.readSink('org-a', p.id), [{ from: at('10:00'), n: 1 }]);
  });

  test(`${backend.name}: windows recorded out of order (workers run them in parallel) are each recorded once, in window order`, async (t) => {
    const store = await open(t);
    const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('10:07'));
    const runner = new WindowRunner(store, windows);
    const window = (from: string, to: string) => ({ pipelineId: p.id, dataStart: at(from), dataEnd: at(to), attempt: 1 });
    t.true((await runner.run(p, window('11:00', '12:00'), at('12:30'))).recorded);
    t.true((await runner.run(p, window('10:00', '11:00'), at('12:30'))).recorded, 'the earlier window after the later one');
    t.false((await runner.run(p, window('10:00', '11:00'), at('12:30'))).recorded, 'a second run of a recorded window is dropped');
    t.deepEqual((await store.get(p.id)).windowEnd, at('12:00'), 'the progress never moves back');
    t.deepEqual(await store.readSink('org-a', p.id), [
      { from: at('10:00'), n: 1 },
      { from: at('11:00'), n: 1 },
    ]);
  });

  test(`${backend.name}: with a dispatch, a pass sends the due windows instead of running them, and later passes send none again`, async (t) => {
    const store = await open(t);
    const sent = new Map<string, PipelineWindow>();
    const dispatch = {
      send: async (w: PipelineWindow) => {
        const key = `${w.pipelineId}:${w.dataEnd.toISOString()}:${w.attempt}`;
        if (sent.has(key)) return false;
        sent.set(key, w);
        return true;
      },
    };
    let ran = 0;
    const engine = { run: async () => (ran++, []) };
    const scheduler = new PipelineScheduler(store, engine, { dispatch });
    const p = await store.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('10:07'));
    await scheduler.runDue(at('12:30'));
    await scheduler.runDue(at('12:31'));
    t.is(ran, 0, 'nothing ran in the scheduler');
    t.deepEqual(
      [...sent.values()].map((w) => [w.dataStart, w.dataEnd, w.attempt]),
      [
        [at('10:00'), at('11:00'), 1],
        [at('11:00'), at('12:00'), 1],
      ],
    );
    t.deepEqual(await store.runs(p.id), []);
  });

  test(`${backend.name}: two schedulers passing at once (an overlap of leaders) record each window once`, async (t) => {
    const tables = await backend.open(t);
    const [one, two] = [new PipelineStore(tables), new PipelineStore(tables)];
    await one.init();
    const p = await one.create({ organizationId: 'org-a', name: 'hourly', stages, schedule: '0 * * * *' }, at('06:07'));
    await Promise.all([new PipelineScheduler(one, windows).runDue(at('12:30')), new PipelineScheduler(two, windows).runDue(at('12:30'))]);
    const ends = (await one.runs(p.id)).map((r) => r.dataEnd.toISOString());
    t.deepEqual(ends, [...new Set(ends)], 'no window recorded twice');
    t.is(ends.length, 6);
    t.is((await one.readSink('org-a', p.id)).length, 6);
  });
}

test('postgres: of two schedulers elected on one database, one makes the passes; when it stops, the other does', async (t) => {
  const tables = (await backends[1].open(t)) as PgStore;
  const store = new PipelineStore(tables);
  const [a, b] = [0, 1].map(() => new PipelineScheduler(store, windows, { election: { url: tables.url }, intervalMs: 60_000 }));
  a.start();
  b.start();
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  const leader = await waitFor('a leader', () => (a.leads ? a : b.leads ? b : undefined), 30_000);
  const other = leader === a ? b : a;
  t.false(other.leads);
  await leader.stop();
  await waitFor('the other to lead', () => other.leads, 30_000);
  t.pass();
});
