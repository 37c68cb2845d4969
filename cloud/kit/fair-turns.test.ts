// FairTurns: one job at a time, round robin between keys (organizations).
import test from 'ava';
import { FairTurns } from './fair-turns.js';

/** A job that records when it starts and finishes only when released. */
function gated(order: string[], name: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    fn: async () => {
      order.push(name);
      await gate;
      return name;
    },
    release: () => release(),
  };
}

test("another organization's single job runs next, not after the first organization's whole burst", async (t) => {
  const turns = new FairTurns();
  const order: string[] = [];
  const first = gated(order, 'a1');
  const running = turns.run('org-a', first.fn);
  const burst = ['a2', 'a3', 'a4'].map((name) => turns.run('org-a', async () => (order.push(name), name)));
  const light = turns.run('org-b', async () => (order.push('b1'), 'b1'));
  t.is(turns.waiting, 4);
  t.deepEqual(order, []); // a1 starts on a later microtask
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order, ['a1']); // one at a time: the others wait while a1 runs
  first.release();
  t.deepEqual(await Promise.all([running, ...burst, light]), ['a1', 'a2', 'a3', 'a4', 'b1']);
  t.deepEqual(order, ['a1', 'b1', 'a2', 'a3', 'a4']);
});

test('keys take turns one job each, and a failed job does not stop the queue', async (t) => {
  const turns = new FairTurns();
  const order: string[] = [];
  const jobs = [
    turns.run('a', async () => void order.push('a1')),
    turns.run('a', async () => {
      order.push('a2');
      throw new Error('a2 failed');
    }),
    turns.run('b', async () => void order.push('b1')),
    turns.run('c', async () => void order.push('c1')),
    turns.run('b', async () => void order.push('b2')),
    turns.run('a', async () => void order.push('a3')),
  ];
  const results = await Promise.allSettled(jobs);
  t.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  t.is((results[1] as PromiseRejectedResult).reason.message, 'a2 failed');
  t.is(results.filter((r) => r.status === 'fulfilled').length, 5);
});

test('with a concurrency of 2, two jobs run at once, and the next free place goes to the organization that had none', async (t) => {
  const turns = new FairTurns(2);
  const order: string[] = [];
  const a1 = gated(order, 'a1');
  const a2 = gated(order, 'a2');
  const all = [
    turns.run('a', a1.fn),
    turns.run('a', a2.fn),
    turns.run('a', async () => (order.push('a3'), 'a3')),
    turns.run('a', async () => (order.push('a4'), 'a4')),
    turns.run('b', async () => (order.push('b1'), 'b1')),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order, ['a1', 'a2']); // both places taken; a3, a4 and b1 wait
  t.is(turns.waiting, 3);
  a1.release();
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order.slice(0, 3), ['a1', 'a2', 'b1']); // b1 took the place a1 left, before a3 and a4
  a2.release();
  t.deepEqual(await Promise.all(all), ['a1', 'a2', 'a3', 'a4', 'b1']);
  t.deepEqual(order, ['a1', 'a2', 'b1', 'a3', 'a4']);
});
