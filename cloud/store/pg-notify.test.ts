// Notify/listen by channel (pg-notify.ts): across two PgStores on one database (two processes of the
// scale-out mode), within one process on the embedded DuckDB store, and after the listening connection
// is lost (terminated by the server), with the resync that tells subscribers to catch up.
import test, { type ExecutionContext } from 'ava';
import { sameDatabase } from '../testing/same-database.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { storeChannels } from './pg-notify.js';

const [duckdb, postgres] = tabularBackends(test);

/** The next payload on channel, or the next few. */
function next(store: Parameters<typeof storeChannels>[0], channel: string, count = 1): Promise<string[]> {
  const got: string[] = [];
  return new Promise((resolve) => {
    const off = storeChannels(store).subscribe(channel, (payload) => {
      got.push(payload);
      if (got.length === count) {
        off();
        resolve(got);
      }
    });
  });
}

async function twoProcesses(t: ExecutionContext) {
  const a = await postgres.open(t);
  return { a, b: await sameDatabase(t, postgres, a) };
}

test('postgres: a payload published by one store reaches the subscribers of the other, and its own once', async (t) => {
  const { a, b } = await twoProcesses(t);
  const onB = next(b, 'test_channel', 2);
  const onA: string[] = [];
  storeChannels(a).subscribe('test_channel', (p) => onA.push(p));
  await storeChannels(b).ready();
  await storeChannels(a).ready();
  t.deepEqual(onA, [], 'nothing before anything is published');
  await storeChannels(a).publish('test_channel', 'first');
  t.deepEqual(onA, ['first'], "this process's subscribers have it when publish resolves");
  await storeChannels(a).publish('test_channel', 'second: with spaces and a : colon');
  t.deepEqual(await onB, ['first', 'second: with spaces and a : colon']);
  // A notification of A's own comes back to A's listening connection; it is not delivered twice.
  const fromB = next(a, 'test_channel');
  await storeChannels(b).publish('test_channel', 'from b');
  await fromB;
  t.deepEqual(onA, ['first', 'second: with spaces and a : colon', 'from b']);
});

test('duckdb: a payload reaches the subscribers of the same store; an unsubscribed one gets nothing more', async (t) => {
  const store = await duckdb.open(t);
  const got: string[] = [];
  const off = storeChannels(store).subscribe('local_only', (p) => got.push(p));
  await storeChannels(store).ready();
  await storeChannels(store).publish('local_only', 'one');
  off();
  await storeChannels(store).publish('local_only', 'two');
  t.deepEqual(got, ['one']);
});

test('both: bad channel names and payloads over PostgreSQL limit are refused naming the rule', async (t) => {
  for (const backend of [duckdb, postgres]) {
    const store = await backend.open(t);
    const channels = storeChannels(store);
    t.throws(() => channels.subscribe('Bad-Name', () => undefined), { message: /channel "Bad-Name": lower-case letters/ });
    await t.throwsAsync(channels.publish('ok', 'x'.repeat(8000)), { message: /payload: at most 7990 bytes, got 8000; send an id/ });
  }
});

test('postgres: a lost listening connection is replaced; subscribers are told to catch up from when it was lost', async (t) => {
  const { a, b } = await twoProcesses(t);
  const resyncs: Date[] = [];
  storeChannels(b).onResync((since) => resyncs.push(since));
  storeChannels(b).subscribe('test_channel', () => undefined);
  await storeChannels(b).ready();
  t.is(resyncs.length, 1, 'the first connection counts as a resync, from the first subscription');
  const before = new Date();
  const gotResync = new Promise<Date>((resolve) => storeChannels(b).onResync(resolve));
  const killed = await a.query(
    "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'platform-cloud listen' AND datname = current_database()",
  );
  t.deepEqual(
    killed.map((r) => r.ok),
    [true],
  );
  const since = await gotResync;
  t.true(since.getTime() <= Date.now());
  t.true(since.getTime() >= resyncs[0].getTime(), 'no earlier than the connection was last known to work');
  t.true(since.getTime() <= before.getTime() + 1, 'no later than the moment it was lost');
  // And notifications arrive again on the new connection.
  const again = next(b, 'test_channel');
  await storeChannels(a).publish('test_channel', 'after');
  t.deepEqual(await again, ['after']);
});

test('postgres: closing the store ends its listening connection', async (t) => {
  const { a, b } = await twoProcesses(t);
  storeChannels(b).subscribe('test_channel', () => undefined);
  await storeChannels(b).ready();
  const listening = async () =>
    Number(
      (await a.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'platform-cloud listen' AND datname = current_database()"))[0].n,
    );
  t.is(await listening(), 1);
  await b.close();
  // pg_stat_activity may show the backend for a moment after the client left.
  for (let i = 0; i < 100 && (await listening()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.is(await listening(), 0);
});

test('postgres: channels subscribed while the listening connection is being set up, or after, are listened to as well', async (t) => {
  const { a, b } = await twoProcesses(t);
  storeChannels(b).subscribe('first_channel', () => undefined);
  // The connection is being made now: this channel was not in the list it started with.
  const during = next(b, 'second_channel');
  await storeChannels(b).ready();
  const after = next(b, 'third_channel');
  // A channel added once connected is listened to on the same connection, which takes a moment.
  await new Promise<void>((resolve) => storeChannels(b).onResync(() => resolve()));
  await storeChannels(a).publish('second_channel', 'two');
  await storeChannels(a).publish('third_channel', 'three');
  t.deepEqual(await during, ['two']);
  t.deepEqual(await after, ['three']);
});
