// A capture method's loop on the data manager's side: the batches its sampler posts are encoded, framed
// and appended; a file closes once it reaches maximum_capture_file_size_bytes; failed captures are
// counted and reported, not stored.
import test from 'ava';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { SampleBatch, SamplerFunction } from '../workers/port-sampler.js';
import { CLOSED_SUFFIX, OPEN_SUFFIX, readCaptureFile } from './capture-file.js';
import { CaptureLoop, captureFileBase } from './capture-loop.js';
import { builtinCaptureMethods } from '../resource/capture-methods.js';

const readings = builtinCaptureMethods['core:component:sensor'].Readings;

function loop(maxFileBytes: number) {
  const captureDir = mkdtempSync(join(tmpdir(), 'capture-loop-'));
  let deliver: (batch: SampleBatch) => void = () => undefined;
  let stops = 0;
  const sample: SamplerFunction = (_spec, onBatch) => {
    deliver = onBatch;
    return { stop: async () => void stops++ };
  };
  const errors: string[] = [];
  const capture = new CaptureLoop({
    captureDir,
    resource: 'thermo',
    api: 'core:component:sensor',
    spec: { method: 'Readings', kind: 'tabular', frequencyHz: 100, additionalParams: {}, tags: ['t'] },
    maxFileBytes,
    calls: readings.calls({}),
    shape: (values) => readings.shape(values, {}),
    sample,
    onError: (m) => void errors.push(m),
  });
  capture.run();
  return { capture, dir: capture.dir, deliver: (b: SampleBatch) => deliver(b), errors, stops: () => stops };
}

const sampleAt = (i: number) => ({ requested: 1_764_000_000_000 + i, received: 1_764_000_000_001 + i, lateMs: 0.1, values: [{ n: i, pad: 'x'.repeat(40) }] });

const filesIn = (dir: string, suffix: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort();

test('batches are stored in order; a file closes once it reaches the size limit, and stop closes the last one', async (t) => {
  const l = loop(1024);
  for (let b = 0; b < 10; b++) l.deliver({ samples: Array.from({ length: 10 }, (_, i) => sampleAt(b * 10 + i)), skipped: 1 });
  t.true(filesIn(l.dir, CLOSED_SUFFIX).length >= 5, 'several files closed on size');
  t.is(filesIn(l.dir, OPEN_SUFFIX).length, 1, 'one file open');
  await l.capture.stop();
  t.is(l.stops(), 1);
  t.is(filesIn(l.dir, OPEN_SUFFIX).length, 0);
  const files = filesIn(l.dir, CLOSED_SUFFIX).map((f) => readCaptureFile(join(l.dir, f)));
  const ns: number[] = [];
  const uploadIds = new Set<string>();
  for (const file of files) {
    uploadIds.add(file.header.upload_id);
    t.deepEqual(file.header.tags, ['t']);
    t.is(file.header.kind, 'tabular');
    // A file closes with the record that reached the limit: it holds at most one record beyond it.
    t.true(file.validBytes - file.records.at(-1)!.byteLength - 8 < 1024);
    for (const record of file.records) {
      const data = SensorData.decode(record);
      const value = (data.struct as { readings: { n: number } }).readings;
      t.is(data.metadata!.timeRequested!.getTime(), 1_764_000_000_000 + value.n);
      ns.push(value.n);
    }
  }
  t.is(uploadIds.size, files.length, 'each file has its own upload id');
  t.deepEqual(
    ns,
    Array.from({ length: 100 }, (_, i) => i),
  );
  t.is(l.capture.stats.records, 100);
  t.is(l.capture.stats.skipped, 10);
  t.is(l.capture.stats.lateness.length, 100);
});

test('capture file names sort in creation order, also when many are made within one millisecond', (t) => {
  const names = Array.from({ length: 500 }, () => captureFileBase('/capture'));
  t.deepEqual([...names].sort(), names);
  t.is(new Set(names).size, names.length);
});

test("the status' lateness covers the ticks of the last 10 s, not those since the start", async (t) => {
  const l = loop(256 * 1024);
  const at = (i: number, ms: number, lateMs: number) => ({ ...sampleAt(i), requested: 1_764_000_000_000 + ms, lateMs });
  // A busy start (late ticks), then 10 s later steady ticks.
  l.deliver({ samples: [at(0, 0, 40), at(1, 50, 30), at(2, 10_000, 1), at(3, 10_050, 2), at(4, 12_000, 3)], skipped: 0 });
  await l.capture.stop();
  t.deepEqual(l.capture.recentLateness(1_764_000_000_000 + 12_000), [1, 2, 3]);
  t.deepEqual(l.capture.recentLateness(1_764_000_000_000 + 21_000), [3]);
  t.deepEqual(l.capture.recentLateness(1_764_000_000_000 + 30_000), []);
});

test('a failed capture is counted and reported once per distinct message, and nothing is stored for it', async (t) => {
  const l = loop(256 * 1024);
  const failed = { requested: 5, received: 6, lateMs: 0, error: { code: 'UNAVAILABLE' as const, message: 'sensor unplugged', resource: 'thermo' } };
  l.deliver({ samples: [sampleAt(0), failed, failed, sampleAt(1)], skipped: 0 });
  await l.capture.stop();
  t.is(l.capture.stats.records, 2);
  t.is(l.capture.stats.errors, 2);
  t.is(l.capture.stats.last_error, 'capture thermo/Readings: sensor unplugged');
  t.deepEqual(l.errors, ['capture thermo/Readings: sensor unplugged']);
  const [file] = filesIn(l.dir, CLOSED_SUFFIX);
  t.is(readCaptureFile(join(l.dir, file)).records.length, 2);
});
