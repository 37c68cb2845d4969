import test from 'ava';
import { status } from '@grpc/grpc-js';
import { StatusError } from '../../core/serving/status-error.js';
import { QueryAdmission } from './admission.js';

/** A query that runs until released. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { open, done };
}

test('at most maxPerOrg of one organization and maxTotal in all run at once', async (t) => {
  const admission = new QueryAdmission({ maxTotal: 3, maxPerOrg: 2, maxWaitMs: 60_000 });
  const started: string[] = [];
  const gates = Array.from({ length: 4 }, gate);
  const runs = gates.map((g, i) =>
    admission.run('org-a', async () => {
      started.push(`a${i}`);
      await g.done;
    }),
  );
  await new Promise((r) => setImmediate(r));
  t.deepEqual(started, ['a0', 'a1']);
  const b = gate();
  const runB = admission.run('org-b', async () => {
    started.push('b');
    await b.done;
  });
  await new Promise((r) => setImmediate(r));
  t.deepEqual(started, ['a0', 'a1', 'b'], 'another organization gets the free slot at once');
  t.is(admission.active, 3);
  gates[0].open();
  await runs[0];
  t.deepEqual(started, ['a0', 'a1', 'b', 'a2']);
  for (const g of [...gates, b]) g.open();
  await Promise.all([...runs, runB]);
  t.is(admission.active, 0);
});

test('when a slot frees, organizations take turns instead of first come first served', async (t) => {
  const admission = new QueryAdmission({ maxTotal: 1, maxPerOrg: 1, maxWaitMs: 60_000 });
  const order: string[] = [];
  const first = gate();
  const running = admission.run('org-a', () => first.done);
  const waiting = [
    ...['a1', 'a2', 'a3'].map((n) =>
      admission.run('org-a', async () => {
        order.push(n);
      }),
    ),
    admission.run('org-b', async () => {
      order.push('b1');
    }),
  ];
  first.open();
  await Promise.all([running, ...waiting]);
  t.deepEqual(order, ['a1', 'b1', 'a2', 'a3']);
});

test('waiting longer than maxWaitMs is RESOURCE_EXHAUSTED naming the limits, and the slot is not leaked', async (t) => {
  const admission = new QueryAdmission({ maxTotal: 1, maxPerOrg: 1, maxWaitMs: 20 });
  const hold = gate();
  const running = admission.run('org-a', () => hold.done);
  const err = await t.throwsAsync(
    admission.run('org-a', async () => 1),
    { instanceOf: StatusError },
  );
  t.is(err!.code, status.RESOURCE_EXHAUSTED);
  t.regex(err!.message, /waited 20 ms for a turn.*PLATFORM_QUERY_CONCURRENCY_PER_ORG.*PLATFORM_QUERY_CONCURRENCY/);
  hold.open();
  await running;
  t.is(await admission.run('org-a', async () => 2), 2);
});

test('too many waiting queries of one organization are refused at once', async (t) => {
  const admission = new QueryAdmission({ maxTotal: 1, maxPerOrg: 1, maxWaitMs: 60_000, maxQueuedPerOrg: 2 });
  const hold = gate();
  const running = admission.run('org-a', () => hold.done);
  const queued = [admission.run('org-a', async () => 1), admission.run('org-a', async () => 1)];
  const err = await t.throwsAsync(
    admission.run('org-a', async () => 1),
    { instanceOf: StatusError },
  );
  t.is(err!.code, status.RESOURCE_EXHAUSTED);
  t.regex(err!.message, /PLATFORM_QUERY_MAX_QUEUED_PER_ORG=2/);
  hold.open();
  await Promise.all([running, ...queued]);
});

test('a query that throws releases its slot', async (t) => {
  const admission = new QueryAdmission({ maxTotal: 1, maxPerOrg: 1, maxWaitMs: 60_000 });
  await t.throwsAsync(
    admission.run('org-a', async () => {
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.is(admission.active, 0);
  t.is(await admission.run('org-a', async () => 3), 3);
});
