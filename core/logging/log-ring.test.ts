import test from 'ava';
import { LogRing, type RingLine } from './log-ring.js';

const line = (message: string, level: RingLine['level'] = 'info') => ({ level, logger: 'platform.test', message });

test('the ring keeps the most recent lines up to its capacity, oldest first, filtered by level', (t) => {
  const ring = new LogRing(3);
  ring.add(line('a'), 1);
  ring.add(line('b', 'debug'), 2);
  ring.add(line('c', 'error'), 3);
  ring.add(line('d', 'warn'), 4);
  t.deepEqual(
    ring.recent('debug', 10).map((l) => l.message),
    ['b', 'c', 'd'],
  );
  t.deepEqual(
    ring.recent('warn', 10).map((l) => l.message),
    ['c', 'd'],
  );
  t.deepEqual(
    ring.recent('debug', 2).map((l) => l.message),
    ['c', 'd'],
  );
  t.deepEqual(ring.recent('debug', 0), []);
  t.throws(() => new LogRing(0), { message: /capacity: must be a positive integer/ });
});

test('subscribers get new lines at or above their level, in batches, until they close or the ring closes', async (t) => {
  const ring = new LogRing(10);
  const got: string[][] = [];
  let ended = 0;
  const sub = ring.subscribe(
    'warn',
    (lines) => got.push(lines.map((l) => l.message)),
    () => ended++,
  );
  ring.add(line('quiet', 'info'), 1);
  ring.add(line('w1', 'warn'), 2);
  ring.add(line('e1', 'error'), 3);
  t.deepEqual(got, [], 'delivered on a later turn, never inside the sink');
  await new Promise((r) => setImmediate(r));
  t.deepEqual(got, [['w1', 'e1']]);
  sub.close();
  ring.add(line('after', 'error'), 4);
  await new Promise((r) => setImmediate(r));
  t.is(got.length, 1);
  const other: string[] = [];
  ring.subscribe(
    'debug',
    (lines) => other.push(...lines.map((l) => l.message)),
    () => ended++,
  );
  ring.add(line('last', 'debug'), 5);
  ring.close();
  t.deepEqual(other, ['last'], 'pending lines go out before the end');
  t.is(ended, 1);
  ring.subscribe(
    'debug',
    () => t.fail(),
    () => ended++,
  );
  t.is(ended, 2, 'subscribing to a closed ring ends at once');
});

test('a subscriber that falls behind loses its oldest unsent lines and is told how many', async (t) => {
  const ring = new LogRing(10);
  const batches: { first: string; count: number; dropped: number }[] = [];
  ring.subscribe(
    'debug',
    (lines, dropped) => batches.push({ first: lines[0].message, count: lines.length, dropped }),
    () => undefined,
  );
  for (let i = 0; i < 1005; i++) ring.add(line(`n${i}`), i);
  await new Promise((r) => setImmediate(r));
  t.deepEqual(batches, [{ first: 'n5', count: 1000, dropped: 5 }]);
});
