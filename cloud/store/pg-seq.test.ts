// Seq reservations on PostgreSQL (pg-seq.ts): consecutive, unique ranges across stores (processes) on one
// database; and the reservation's own commit skips its disk flush without changing how anything else on
// the connection commits: the rows of an upload, which the reservation's flush relies on, still wait for
// theirs before the upload is acknowledged.
import test from 'ava';
import { tabularBackends } from '../testing/tabular-backends.js';
import { PgStore } from './pg-store.js';
import { reserveSeqPg } from './pg-seq.js';

const [, postgres] = tabularBackends(test);

test('ranges reserved at once by two stores on one database are consecutive and never overlap', async (t) => {
  const a = await postgres.open(t, { poolSize: 3 });
  const database = String((await a.query('SELECT current_database() AS d'))[0].d);
  const b = await PgStore.open(postgres.lastUrl!.replace(/\/[^/]+$/, `/${database}`), { poolSize: 3 });
  t.teardown(() => b.close());
  const sizes = Array.from({ length: 40 }, (_, i) => 1 + ((i * 37) % 500));
  const firsts = await Promise.all(sizes.map((n, i) => reserveSeqPg(i % 2 ? a : b, 'tabular_data', n)));
  const ranges = firsts.map((first, i) => [first, first + BigInt(sizes[i]) - 1n]).sort((x, y) => (x[0] < y[0] ? -1 : 1));
  t.is(ranges[0][0], 1n);
  for (let i = 1; i < ranges.length; i++) t.is(ranges[i][0], ranges[i - 1][1] + 1n, 'each range starts right after another: no gap, no overlap');
  t.is(ranges[ranges.length - 1][1], BigInt(sizes.reduce((x, y) => x + y, 0)));
  await t.throwsAsync(reserveSeqPg(a, 'tabular_data', 0), { message: /whole number >= 1/ });
});

test("a reservation leaves the connection's commits synchronous", async (t) => {
  // One connection: the reservation and the statements after it share it.
  const store = await postgres.open(t, { poolSize: 1 });
  t.deepEqual(await store.query('SHOW synchronous_commit'), [{ synchronous_commit: 'on' }]);
  await reserveSeqPg(store, 'binary_data', 5);
  t.deepEqual(await store.query('SHOW synchronous_commit'), [{ synchronous_commit: 'on' }]);
  await store.transact(async (tx) => {
    await reserveSeqPg(tx as never, 'binary_data', 1).catch(() => undefined);
    t.deepEqual(await tx.query('SHOW synchronous_commit'), [{ synchronous_commit: 'off' }], 'inside one transaction the setting holds to its end');
  });
  t.deepEqual(await store.query('SHOW synchronous_commit'), [{ synchronous_commit: 'on' }]);
});
