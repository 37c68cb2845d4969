import test from 'ava';
import { MingoPool } from './mingo-pool.js';

test('a query whose time runs out while its child is still starting leaves that child to start, for the next query', async (t) => {
  const pool = new MingoPool({ processes: 1 });
  t.teardown(() => pool.close());
  t.is(pool.childrenStarted, 1);
  // Called at once, before the child can be ready (starting Node takes far longer than 1 ms).
  const err = await pool.run({ docs: [{ a: 1 }], stages: [{ $count: 'n' }] }, AbortSignal.timeout(1)).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.is((err as { name?: string } | undefined)?.name, 'TimeoutError');
  t.deepEqual(await pool.run({ docs: [{ a: 1 }, { a: 2 }], stages: [{ $count: 'n' }] }, AbortSignal.timeout(120_000)), [{ n: 2 }]);
  t.is(pool.childrenStarted, 1, 'the starting child was not killed and replaced');
});

test('a query whose time runs out while its child evaluates kills that child; a fresh one answers the next', async (t) => {
  const pool = new MingoPool({ processes: 1 });
  t.teardown(() => pool.close());
  t.deepEqual(await pool.run({ docs: [{ a: 1 }], stages: [{ $count: 'n' }] }, AbortSignal.timeout(120_000)), [{ n: 1 }]);
  const controller = new AbortController();
  // A synchronous runaway: only killing the child stops it.
  const stages = [
    { $project: { x: { $reduce: { input: { $range: [0, 1e6] }, initialValue: 0, in: { $add: ['$$value', { $size: { $range: [0, 1000] } }] } } } } },
  ];
  const running = pool.run({ docs: Array.from({ length: 1000 }, (_, i) => ({ i })), stages }, controller.signal);
  setTimeout(() => controller.abort(new Error('time limit')), 500);
  await t.throwsAsync(running, { message: 'time limit' });
  t.deepEqual(await pool.run({ docs: [{ a: 1 }], stages: [{ $count: 'n' }] }, AbortSignal.timeout(120_000)), [{ n: 1 }]);
  t.is(pool.childrenStarted, 2);
});
