// After a cloud outage the config watch finds the cloud again in time (issue 29, item 3; SPEC: a config
// change within 15 s): the waits between attempts never exceed 10 s, whatever the jitter and however long
// the outage, and a call of this machine that reached the cloud (here on another thread, as the data
// manager's sync does) makes a waiting watch try at once. No wall clock: the schedule itself is checked,
// and the follower runs on mocked timers.
import test from 'ava';
import { mock } from 'node:test';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { ConfigFile } from '../config/config-file.js';
import { LogSink, type SinkRecord } from '../logging/sink.js';
import type { CloudLink } from '../cloud-link/cloud-link.js';
import { ConfigCache } from './config-cache.js';
import { OnlineConfig } from './online-config.js';
import { cloudReachable } from '../cloud-link/reachable.js';
import { RETRY_JITTER, RETRY_MAX_MS, RETRY_MIN_MS, retryDelay } from './reconnect.js';

test('every wait before a new attempt is at most 10 s, doubles from 1 s, and is jittered down by at most a quarter', (t) => {
  t.is(RETRY_MIN_MS, 1000);
  t.is(RETRY_MAX_MS, 10_000);
  for (const random of [() => 0, () => 0.5, () => 0.999999, Math.random]) {
    let previousBase = 0;
    for (let failures = 0; failures < 200; failures++) {
      const wait = retryDelay(failures, random);
      const base = Math.min(1000 * 2 ** failures, 10_000);
      t.true(wait <= 10_000, `wait ${wait} after ${failures} failures`);
      t.true(wait >= base * (1 - RETRY_JITTER) - 1 && wait <= base, `wait ${wait} within the jitter of ${base}`);
      t.true(base >= previousBase);
      previousBase = base;
    }
  }
  // The schedule rule of SPEC's 15 s: an attempt at most 10 s after the cloud serves again, which leaves
  // 5 s for the attempt itself (a refused port fails at once; the channel's own backoff is capped at 2 s).
  t.true(RETRY_MAX_MS + 2000 < 15_000);
});

const creds = { id: 'part-1', secret: 's3cret', app_address: '127.0.0.1:8081' };

/** A link whose cloud is down until `up` is set; then WatchConfig streams are accepted and stay open. */
function scriptedLink() {
  const state = { up: false, attempts: 0, streams: 0 };
  const link = {
    partId: creds.id,
    appAddress: creds.app_address,
    robot: {
      config: () => undefined,
      watchConfig: () => {
        const stream = Object.assign(new EventEmitter(), { cancel: () => stream.emit('end') });
        state.streams++;
        setImmediate(() => stream.emit('metadata'));
        return stream;
      },
    },
    unary: () => Promise.reject(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 })),
    metadata: () => {
      state.attempts++;
      return state.up ? Promise.resolve({}) : Promise.reject(Object.assign(new Error('14 UNAVAILABLE: connect ECONNREFUSED'), { code: 14 }));
    },
    refused: () => undefined,
  };
  return { link: link as unknown as CloudLink, state };
}

test.serial('a watch waiting to reconnect tries at once when another thread says a call reached the cloud', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'reconnect-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'credentials.json');
  writeFileSync(path, JSON.stringify({ cloud: creds }));
  const lines: SinkRecord[] = [];
  const sink = await LogSink.create({ destination: new PassThrough().resume(), deduplicate: false });
  sink.tap((record) => lines.push(record));
  const log = sink.logger('platform.online', () => 'debug');
  const { link, state } = scriptedLink();

  mock.timers.enable({ apis: ['setTimeout'] });
  t.teardown(() => mock.timers.reset());
  const online = new OnlineConfig(new ConfigFile(path), link, new ConfigCache(dir, creds.id), log, undefined, () => 0);
  await online.init();
  await online.watch(() => undefined);
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  // The cloud is down: the follower's waits grow to the cap (1, 2, 4, 8, 10 s), the timers ticked by hand.
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    await settle();
    const m = /retrying in (\d+(?:\.\d+)?) s$/.exec(lines[lines.length - 1].message);
    t.truthy(m, lines[lines.length - 1].message);
    waits.push(Number(m![1]));
    mock.timers.tick(Number(m![1]) * 1000);
  }
  await settle();
  t.deepEqual(waits, [1, 2, 4, 8, 10, 10]);
  const attemptsWhileDown = state.attempts;

  // The cloud serves again, and the data manager's sync (another thread) reached it: no timer is ticked,
  // yet the watch tries at once and follows again.
  state.up = true;
  const worker = new Worker(
    "const { BroadcastChannel } = require('node:worker_threads'); const c = new BroadcastChannel('platform:cloud-reachable'); c.postMessage(Date.now()); c.close();",
    { eval: true },
  );
  await new Promise((resolve) => worker.once('exit', resolve));
  for (let i = 0; i < 200 && state.streams === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  t.is(state.attempts, attemptsWhileDown + 1, 'one attempt, without waiting out the 10 s');
  t.is(state.streams, 1);
  for (let i = 0; i < 50 && !lines.some((l) => l.message === 'following config revisions from the cloud'); i++) await new Promise((r) => setImmediate(r));
  t.true(lines.some((l) => l.message === 'following config revisions from the cloud'));
  // The same signal from this thread, while the watch is open, starts nothing.
  cloudReachable(Date.now() + 10_000);
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  t.is(state.streams, 1);
  const closing = online.close();
  await settle();
  await closing;
  await sink.close?.();
});
