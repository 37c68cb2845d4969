// Log levels end to end: the real runtime, its resources' debug lines, rules, log_configuration and -debug.
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const sensor = (name: string, level?: string) => ({ name, api: 'core:component:sensor', model: 'fake', ...(level ? { log_configuration: { level } } : {}) });
const constructedBy = (logs: Record<string, unknown>[]) =>
  logs
    .filter((l) => l.msg === 'fake sensor constructed')
    .map((l) => l.logger)
    .sort();

test.serial('rules apply last-match-wins, log_configuration beats them, and a change applies while running', async (t) => {
  const runtime = await spawnRuntime({
    components: [sensor('quiet'), sensor('own', 'Debug'), sensor('loud')],
    log: [
      { pattern: 'platform.components.*', level: 'debug' },
      { pattern: 'platform.components.sensor.quiet', level: 'error' },
    ],
  });
  t.teardown(() => runtime.stop());
  // A worker's log lines travel apart from its task results, so they may land just after `serving`.
  await eventually(
    () => constructedBy(runtime.logs()),
    (l) => l.length >= 2,
  );
  t.deepEqual(constructedBy(runtime.logs()), ['platform.components.sensor.loud', 'platform.components.sensor.own']);
  // Rebuild `quiet` (its attributes change) under a rule that now lets its debug lines through.
  runtime.writeConfig({
    components: [{ ...sensor('quiet'), attributes: { readings: { v: 2 } } }, sensor('own', 'debug'), sensor('loud')],
    log: [{ pattern: 'platform.components.*', level: 'debug' }],
  });
  await eventually(
    () => constructedBy(runtime.logs()),
    (loggers) => loggers.includes('platform.components.sensor.quiet'),
  );
  t.pass();
});

test.serial('-debug overrides every log setting, and -log-file writes the lines to a rotating file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-logfile-'));
  const file = join(dir, 'runtime.log');
  const runtime = await spawnRuntime(
    { components: [sensor('own', 'error'), sensor('ruled')], log: [{ pattern: '.*', level: 'error' }] },
    { args: ['-debug', '-log-file', file] },
  );
  await eventually(
    () => constructedBy(runtime.logs()),
    (l) => l.length >= 2,
  );
  t.deepEqual(constructedBy(runtime.logs()), ['platform.components.sensor.own', 'platform.components.sensor.ruled']);
  t.is(await runtime.stop(), 0);
  const files = readdirSync(dir);
  t.true(files.length >= 1, `files: ${files.join(', ')}`);
  const text = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('');
  t.true(text.includes('"msg":"fake sensor constructed"'));
  t.true(text.includes('"msg":"serving"'));
});
