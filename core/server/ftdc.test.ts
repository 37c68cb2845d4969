// -ftdc end to end: the real program samples itself and its resources into the capture folder.
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FtdcRecord } from '../diagnostics/ftdc/capture.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const sensor = { name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { v: 1 } } };

function records(dir: string): FtdcRecord[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as FtdcRecord);
}

test('by default a sample of the process and of each resource is appended every second', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor] });
  t.teardown(() => runtime.stop());
  // Under load the first samples may see the sensor still configuring: wait for one that sees it ready.
  const samples = await eventually(
    () => records(runtime.ftdcDir),
    (r) => r.length >= 3 && (r.at(-1)!.resources as { state?: string }[])[0]?.state === 'ready',
    60_000,
  );
  t.regex(readdirSync(runtime.ftdcDir)[0], /^ftdc-.*\.jsonl$/);
  const last = samples.at(-1)!;
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
    t.is(typeof last.process[field], 'number', field);
  }
  t.like(last.resources[0], { key: 's', state: 'ready', worker_alive: true });
  const times = samples.map((s) => Date.parse(s.t));
  t.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
  );
  t.true(runtime.logs().some((l) => l.msg === 'full-time data capture' && l.dir === runtime.ftdcDir && l.interval_ms === 1000));
});

test('-ftdc=false writes nothing', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor] }, { args: ['-ftdc=false'] });
  t.teardown(() => runtime.stop());
  // With capture on, the first sample lands one second after start; give it three times that.
  await new Promise((r) => setTimeout(r, 3000));
  t.is(await runtime.stop(), 0);
  t.false(existsSync(runtime.ftdcDir));
  t.false(runtime.logs().some((l) => String(l.msg).includes('full-time data capture')));
});

test('a capture folder that cannot be written logs one warning and the runtime serves on', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'platform-ftdc-'));
  writeFileSync(join(parent, 'file'), '');
  const runtime = await spawnRuntime({ components: [sensor] }, { env: { PLATFORM_FTDC_DIR: join(parent, 'file', 'diagnostics.data') } });
  t.teardown(() => runtime.stop());
  const warnings = runtime.logs().filter((l) => String(l.msg).includes('full-time data capture'));
  t.is(warnings.length, 1);
  t.is(warnings[0].level, 40, 'pino warn');
  t.is(await runtime.stop(), 0);
});
