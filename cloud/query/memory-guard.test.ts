import test from 'ava';
import { status } from '@grpc/grpc-js';
import { MemoryGuard } from './memory-guard.js';
import { SqlSandbox } from './sql/sql-sandbox.js';
import { DEFAULT_QUERY_LIMITS } from './sql/limits.js';
import { createTabularFixture } from './testing/tabular-fixture.js';
import { StatusError } from '../../core/serving/status-error.js';

const MB = 2 ** 20;
// The guard's own timer never fires in these tests: each sample is taken by the test, with a made-up RSS.
const NEVER = 2 ** 30;

function fakeGuard(limitMb = 1000) {
  const state = { rss: 200 * MB };
  const guard = new MemoryGuard(limitMb * MB, () => state.rss, NEVER);
  return { guard, state };
}

test('under the limit nobody is interrupted', (t) => {
  const { guard, state } = fakeGuard();
  const fired: string[] = [];
  guard.watch(() => fired.push('a'));
  guard.watch(() => fired.push('b'));
  state.rss = 900 * MB;
  guard.sample();
  t.deepEqual(fired, []);
});

test('over the limit only the query that owned the climb is interrupted, not the one beside it', (t) => {
  const { guard, state } = fakeGuard();
  const fired: string[] = [];
  guard.sample();
  const endBomb = guard.watch(() => fired.push('bomb'));
  guard.sample();
  state.rss = 800 * MB; // the bomb runs alone while RSS climbs
  guard.sample();
  const endNormal = guard.watch(() => fired.push('normal'));
  state.rss = 1100 * MB; // both run while RSS passes the limit
  guard.sample();
  t.deepEqual(fired, ['bomb']);
  // Until the bomb has ended its memory is still held: the guard waits instead of stopping the next query.
  state.rss = 1200 * MB;
  guard.sample();
  guard.sample();
  t.deepEqual(fired, ['bomb']);
  endBomb();
  state.rss = 300 * MB;
  guard.sample();
  t.deepEqual(fired, ['bomb']);
  endNormal();
  t.is(guard.running, 0);
});

test('when two queries shared the whole climb and hold nothing, the older one goes first', (t) => {
  // DuckDB gives no memory figure per query while it runs: equal shares are a tie, broken by age.
  const { guard, state } = fakeGuard();
  const fired: string[] = [];
  guard.sample();
  guard.watch(() => fired.push('older'));
  guard.watch(() => fired.push('younger'));
  state.rss = 1050 * MB;
  guard.sample();
  t.deepEqual(fired, ['older']);
});

test('what a query holds itself counts: the larger result is stopped', (t) => {
  const { guard, state } = fakeGuard();
  const fired: string[] = [];
  guard.sample();
  guard.watch(() => fired.push('small'), { held: () => 1 * MB });
  guard.watch(() => fired.push('large'), { held: () => 300 * MB });
  state.rss = 1100 * MB;
  guard.sample();
  t.deepEqual(fired, ['large']);
});

test('if RSS stays over after the largest ended, the next largest goes, until RSS is under the cap', (t) => {
  const { guard, state } = fakeGuard();
  const fired: string[] = [];
  guard.sample();
  const ends = new Map<string, () => void>();
  for (const [name, held] of [
    ['a', 100],
    ['b', 300],
    ['c', 200],
  ] as const) {
    ends.set(
      name,
      guard.watch(() => fired.push(name), { held: () => held * MB }),
    );
  }
  state.rss = 1100 * MB;
  guard.sample();
  t.deepEqual(fired, ['b']);
  ends.get('b')!();
  guard.sample(); // still over: the next largest
  t.deepEqual(fired, ['b', 'c']);
  ends.get('c')!();
  state.rss = 700 * MB; // back under: the smallest keeps running
  guard.sample();
  t.deepEqual(fired, ['b', 'c']);
});

test('after RSS was inflated by something else, a small query is not stopped; a runaway one still is', (t) => {
  // Issue 27, finding 8: RSS does not come back after an inflation, and the guard used to stop every query
  // that ran while it was over the cap, so every organization's SELECT 1 failed from then on.
  const { guard, state } = fakeGuard(1000);
  const fired: string[] = [];
  state.rss = 2000 * MB; // inflated while no query ran (an upload, gRPC buffers, pages the allocator keeps)
  guard.sample();
  const endSmall = guard.watch(() => fired.push('small'));
  guard.sample();
  state.rss = 2001 * MB;
  guard.sample();
  guard.sample();
  t.deepEqual(fired, [], 'a query that grew the process by 1 MiB is not the cause');
  endSmall();
  // A runaway query grows the process itself: once its own growth reaches the minimum, it is stopped.
  guard.watch(() => fired.push('runaway'));
  guard.sample();
  state.rss = 2040 * MB;
  guard.sample();
  t.deepEqual(fired, [], '39 MiB of its own is under the 64 MiB minimum');
  state.rss = 2100 * MB;
  guard.sample();
  t.deepEqual(fired, ['runaway']);
});

test('what a query holds counts toward its growth after an inflation too', (t) => {
  const { guard, state } = fakeGuard(1000);
  const fired: string[] = [];
  state.rss = 1500 * MB;
  guard.sample();
  guard.watch(() => fired.push('small'), { held: () => 2 * MB });
  guard.watch(() => fired.push('big result'), { held: () => 200 * MB });
  guard.sample();
  t.deepEqual(fired, ['big result']);
});

test('the minimum growth is a setting (PLATFORM_QUERY_RSS_MIN_GROWTH_MB)', (t) => {
  const state = { rss: 1500 * MB };
  const guard = new MemoryGuard(1000 * MB, () => state.rss, NEVER, 8 * MB);
  const fired: string[] = [];
  guard.sample();
  guard.watch(() => fired.push('q'));
  guard.sample();
  state.rss = 1507 * MB;
  guard.sample();
  t.deepEqual(fired, []);
  state.rss = 1509 * MB;
  guard.sample();
  t.deepEqual(fired, ['q']);
});

test('a normal query of another organization running beside a memory bomb still answers', async (t) => {
  const fx = await createTabularFixture();
  t.teardown(() => fx.close());
  await fx.insert([{ organization_id: 'org-b', component_name: 'thermo', time_received: new Date(), data: { readings: { temperature: 21 } } }]);
  const { guard, state } = fakeGuard();
  const sandbox = new SqlSandbox(fx.connect, { ...DEFAULT_QUERY_LIMITS, timeoutMs: 120_000, memory: guard });
  const until = async (cond: () => boolean) => {
    while (!cond()) await new Promise((resolve) => setTimeout(resolve, 2));
  };
  guard.sample();
  // The bomb: a long query of organization A, during which (made-up) RSS climbs.
  const bomb = sandbox.query('org-a', 'SELECT count(*) AS n FROM range(1000000) a, range(1000000) b');
  const bombOutcome = bomb.then(
    () => undefined,
    (err: unknown) => err,
  );
  await until(() => guard.running === 1);
  state.rss = 900 * MB;
  guard.sample();
  // Organization B's query: long enough to be running when the limit is passed; then RSS passes the limit.
  const normal = sandbox.query('org-b', 'SELECT count(*) AS n FROM range(10000) a, range(10000) b, (SELECT 1 FROM readings) r');
  await until(() => guard.running === 2);
  state.rss = 1300 * MB;
  guard.sample();
  const err = await bombOutcome;
  t.true(err instanceof StatusError);
  t.is((err as StatusError).code, status.RESOURCE_EXHAUSTED);
  t.regex((err as StatusError).message, /memory passed its 1000 MiB limit .*PLATFORM_QUERY_RSS_LIMIT_MB/);
  state.rss = 400 * MB; // the bomb's memory came back
  t.deepEqual(await normal, [{ n: 100_000_000 }]);
});
