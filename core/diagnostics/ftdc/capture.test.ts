import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DriverLogger } from '../../../plugins/driver.js';
import { eventually } from '../../server/testing/spawn-runtime.js';
import { FtdcCapture, type FtdcRecord } from './capture.js';

function recordingLog() {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  const log: DriverLogger = { debug() {}, info() {}, error() {}, warn: (message, fields) => warnings.push({ message, fields }) };
  return { log, warnings };
}

const records = (dir: string): FtdcRecord[] =>
  readdirSync(dir)
    .sort()
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as FtdcRecord);

const base = { intervalMs: 20, maxFileBytes: 1024 * 1024, maxFiles: 3, syncEveryLines: 5 };

test('each sample holds the process statistics and the resources, and stop ends the sampling', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-'));
  const { log, warnings } = recordingLog();
  const capture = FtdcCapture.start({ ...base, dir, log, resources: () => [{ key: 'a', state: 'ready' }] });
  t.truthy(capture);
  await eventually(
    () => records(dir).length,
    (n) => n >= 3,
    30_000,
  );
  capture!.stop();
  capture!.stop();
  const all = records(dir);
  for (const r of all) {
    t.false(Number.isNaN(Date.parse(r.t)));
    for (const field of [
      'cpu_user_ms',
      'cpu_system_ms',
      'rss_bytes',
      'heap_used_bytes',
      'heap_total_bytes',
      'event_loop_delay_p50_ms',
      'event_loop_delay_p99_ms',
      'active_handles',
    ] as const) {
      t.is(typeof r.process[field], 'number', field);
    }
    t.true(r.process.rss_bytes > 0);
    t.deepEqual(r.resources, [{ key: 'a', state: 'ready' }]);
  }
  t.true(
    all.slice(1).every((r) => r.previous_sample_cost_us > 0),
    'every sample after the first reports the cost of the one before',
  );
  const count = records(dir).length;
  await new Promise((r) => setTimeout(r, 200));
  t.is(records(dir).length, count, 'no sample after stop');
  t.deepEqual(warnings, []);
});

test('rotation keeps at most maxFiles files while sampling', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-'));
  const { log } = recordingLog();
  const capture = FtdcCapture.start({ ...base, maxFileBytes: 1500, dir, log, resources: () => [] });
  t.teardown(() => capture?.stop());
  // Each sample is several hundred bytes, so a file of 1500 bytes holds a few: wait until six files have
  // existed, and check that no more than three ever existed at once.
  const everSeen = new Set<string>();
  let most = 0;
  await eventually(
    () => {
      const names = readdirSync(dir);
      for (const name of names) everSeen.add(name);
      most = Math.max(most, names.length);
      return everSeen.size;
    },
    (n) => n >= 6,
    30_000,
  );
  t.true(most <= 3, `${most} files at once`);
});

test('a folder that cannot be written logs one warning and captures nothing, without throwing', (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'platform-ftdc-'));
  writeFileSync(join(parent, 'file'), '');
  const dir = join(parent, 'file', 'diagnostics.data');
  const { log, warnings } = recordingLog();
  t.is(FtdcCapture.start({ ...base, dir, log, resources: () => [] }), undefined);
  t.is(warnings.length, 1);
  t.regex(warnings[0].message, /full-time data capture is off/);
  t.is(warnings[0].fields?.dir, dir);
  t.false(existsSync(dir));
});

test('resource statistics that throw are recorded as an error in the sample; sampling goes on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-'));
  const { log } = recordingLog();
  const capture = FtdcCapture.start({
    ...base,
    dir,
    log,
    resources: () => {
      throw new Error('kernel busy');
    },
  });
  t.teardown(() => capture?.stop());
  const all = await eventually(
    () => records(dir),
    (r) => r.length >= 2,
    30_000,
  );
  t.is(all[0].resources_error, 'Error: kernel busy');
  t.deepEqual(all[0].resources, []);
});
