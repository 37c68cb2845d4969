// Log retention (SPEC.md "Limits": 30 days, and logs cannot be deleted), with an injected clock.
import test from 'ava';
import { AppServiceService, RobotServiceService } from '../../gen/platform/app/v1/robot_part.js';
import { Store } from '../store/store.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { LOG_RETENTION_MS, PartLogs, type StoredLogEntry } from './part-logs.js';

const DAY = 24 * 3600 * 1000;
const entry = (time: number, message: string): StoredLogEntry => ({ time: new Date(time), level: 'info', loggerName: 'platform.kernel', message, fields: {} });

test('entries older than 30 days are refused at upload, hidden from queries once they expire, and swept', async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  try {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const logs = await PartLogs.open(store, () => now);
    t.is(LOG_RETENTION_MS, 30 * DAY);
    const stored = await logs.append('p1', [entry(now - 31 * DAY, 'too old'), entry(now - 29 * DAY, 'old'), entry(now - DAY, 'recent')]);
    t.is(stored, 2);
    t.deepEqual(
      (await logs.query('p1', {})).logs.map((e) => e.message),
      ['recent', 'old'],
    );
    now += 2 * DAY; // 'old' is now 31 days old
    t.deepEqual(
      (await logs.query('p1', {})).logs.map((e) => e.message),
      ['recent'],
    );
    t.is(await logs.sweep(), 1);
    const rows = await store.query('SELECT message FROM logs.part_logs ORDER BY time');
    t.deepEqual(
      rows.map((r) => r.message),
      ['recent'],
    );
  } finally {
    await store.close();
    removeDataDir(dir);
  }
});

test('the service sweeps expired entries when it starts and then on its interval', async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  let now = Date.parse('2026-03-01T00:00:00Z');
  const logs = await PartLogs.open(store, () => now);
  t.teardown(async () => {
    logs.stop();
    await store.close();
    removeDataDir(dir);
  });
  const count = async () => Number((await store.query('SELECT count(*) AS n FROM logs.part_logs'))[0].n);
  const eventually = async (what: string, fn: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  t.is(await logs.append('p1', [entry(now - 29 * DAY, 'old'), entry(now, 'fresh')]), 2);
  now += 2 * DAY; // 'old' expired while the service was down
  logs.startSweeping(50);
  await eventually('the sweep at start', async () => (await count()) === 1);
  now += 31 * DAY; // 'fresh' expires while the service runs
  await eventually('a periodic sweep', async () => (await count()) === 0);
  t.is(await count(), 0);
});

test('neither API offers a way to delete logs', (t) => {
  const methods = [...Object.keys(AppServiceService), ...Object.keys(RobotServiceService)];
  t.true(methods.includes('getRobotPartLogs'));
  t.deepEqual(
    methods.filter((m) => /delete|remove|purge|clear/i.test(m)),
    [],
  );
});
