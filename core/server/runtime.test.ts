// platform-server end to end: the real program on a free port, driven with the real gRPC clients.
import test from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { makeClientConstructor } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const run = promisify(execFile);

const board = {
  name: 'board1',
  api: 'core:component:board',
  model: 'fake',
  attributes: { analogs: [{ name: 'pot', pin: '32', value: 512 }], digital_interrupts: [{ name: 'ticks', pin: '36' }] },
};
const sensor = (name: string, readings: Record<string, unknown>) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings } });

test('serves readings, board pins, machine status and health', async (t) => {
  const runtime = await spawnRuntime({ components: [board, sensor('thermo', { temperature_c: 21.5 })] });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  const boards = new BoardServiceClient(runtime.address, insecure());

  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { temperature_c: 21.5 });
  await call(boards, 'setGpio', { name: 'board1', pin: '36', high: true });
  t.true((await call(boards, 'getGpio', { name: 'board1', pin: '36' })).high);
  t.is((await call(boards, 'getDigitalInterruptValue', { boardName: 'board1', digitalInterruptName: 'ticks' })).value, 1);
  await call(boards, 'setPwm', { name: 'board1', pin: '12', dutyPct: 0.25 });
  t.is((await call(boards, 'pwm', { name: 'board1', pin: '12' })).dutyPct, 0.25);
  await call(boards, 'setPwmFrequency', { name: 'board1', pin: '12', frequencyHz: 800 });
  t.is((await call(boards, 'pwmFrequency', { name: 'board1', pin: '12' })).frequencyHz, 800);
  t.is((await call(boards, 'readAnalogReader', { boardName: 'board1', analogReaderName: 'pot' })).value, 512);
  t.deepEqual((await call(boards, 'doCommand', { name: 'board1', command: { set_analog: { name: 'pot', value: 7 } } })).result, { ok: true });
  t.is((await call(boards, 'readAnalogReader', { boardName: 'board1', analogReaderName: 'pot' })).value, 7);

  const names = (await call(robot, 'resourceNames', {})).resources.map(
    (r: { namespace: string; type: string; subtype: string; name: string }) => `${r.namespace}:${r.type}:${r.subtype}/${r.name}`,
  );
  t.deepEqual(names.sort(), ['core:component:board/board1', 'core:component:sensor/thermo']);
  const machine = await call(robot, 'getMachineStatus', {});
  t.true(machine.resources.every((r: { state: ResourceState }) => r.state === ResourceState.RESOURCE_STATE_READY));
  t.regex((await call(robot, 'getVersion', {})).version, /^\d+\.\d+\.\d+/);

  const Health = makeClientConstructor(healthService, 'grpc.health.v1.Health');
  const health = new Health(runtime.address, insecure());
  t.is((await call(health, 'Check' as never, { service: '' })).status, 'SERVING');
  t.is((await call(health, 'Check' as never, { service: 'platform.component.sensor.v1.SensorService' })).status, 'SERVING');
});

test('errors name the problem with standard codes', async (t) => {
  const runtime = await spawnRuntime({ components: [board, sensor('thermo', { t: 1 })] });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  const boards = new BoardServiceClient(runtime.address, insecure());
  const missing = await t.throwsAsync(call(sensors, 'getReadings', { name: 'nope' }));
  t.is((missing as { code?: number }).code, status.NOT_FOUND);
  t.regex(missing!.message, /no resource named "nope"/);
  const wrongApi = await t.throwsAsync(call(sensors, 'getReadings', { name: 'board1' }));
  t.regex(wrongApi!.message, /resource "board1" is a core:component:board, not a core:component:sensor/);
  const noName = await t.throwsAsync(call(sensors, 'getReadings', { name: '' }));
  t.is((noName as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(noName!.message, /name is required/);
  const duty = await t.throwsAsync(call(boards, 'setPwm', { name: 'board1', pin: '12', dutyPct: 1.5 }));
  t.is((duty as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(duty!.message, /duty_pct 1.5: must be between 0 and 1/);
});

test('a saved config change adds, modifies and removes resources; an invalid one keeps the old config', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor('a', { v: 1 }), sensor('b', { v: 2 })] });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  const robot = new RobotServiceClient(runtime.address, insecure());
  runtime.writeConfig({ components: [sensor('a', { v: 10 }), sensor('c', { v: 3 })] });
  await eventually(
    () => call(sensors, 'getReadings', { name: 'c' }),
    (r) => r.readings.v === 3,
  );
  // `a` changed and is rebuilt in the same level as `c`; it may become ready a moment later.
  await eventually(
    () => call(sensors, 'getReadings', { name: 'a' }),
    (r) => r.readings.v === 10,
  );
  await eventually(
    () => call(robot, 'resourceNames', {}),
    (r) => r.resources.length === 2,
  );

  runtime.writeConfig({ components: [{ name: 'a', api: 'core:widget:sensor', model: 'fake' }], debug: 'yes' });
  const status1 = await eventually(
    () => call(robot, 'getMachineStatus', {}),
    (s) => s.configError !== '',
  );
  t.regex(status1.configError, /debug "yes": must be true or false/);
  t.deepEqual((await call(sensors, 'getReadings', { name: 'a' })).readings, { v: 10 });
  t.true(runtime.logs().some((l) => l.msg === 'the saved config is invalid; still running the previous one'));
  // Diffs are logged with their paths and ordinary values (only what may be a secret is redacted: diff.test.ts).
  const diff = runtime.logs().find((l) => l.msg === 'config changed') as { changes: string[] };
  t.true(diff.changes.includes('~ components[a].attributes.readings.v: 1 -> 10'), JSON.stringify(diff.changes));
  t.true(diff.changes.some((c) => c.startsWith('- components[b]: ')));
});

test('the maintenance window defers reconfiguration until the sensor allows it', async (t) => {
  const gate = (allowed: unknown) => sensor('gate', { allowed });
  const runtime = await spawnRuntime({
    components: [gate(false), sensor('s', { v: 1 })],
    maintenance: { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' },
  });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  const maintenance = { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' };
  runtime.writeConfig({ components: [gate(false), sensor('s', { v: 2 })], maintenance });
  await eventually(
    () => runtime.logs(),
    (logs) => logs.some((l) => l.msg === 'reconfiguration deferred by the maintenance window'),
  );
  t.deepEqual((await call(sensors, 'getReadings', { name: 's' })).readings, { v: 1 });
  await call(sensors, 'doCommand', { name: 'gate', command: { set: { allowed: true } } });
  await eventually(
    () => call(sensors, 'getReadings', { name: 's' }),
    (r) => r.readings.v === 2,
  );
  t.true(runtime.logs().some((l) => l.msg === 'reconfigured'));
});

test('Shutdown closes everything and the process exits with status 0; SIGTERM does the same', async (t) => {
  const first = await spawnRuntime({ components: [board, sensor('s', { v: 1 })] });
  await call(new RobotServiceClient(first.address, insecure()), 'shutdown', {});
  t.is(await first.exited, 0);
  t.true(first.logs().some((l) => l.msg === 'stopped'));
  const second = await spawnRuntime({ components: [sensor('s', { v: 1 })] });
  t.is(await second.stop(), 0);
});

test('an invalid config file at start is an error naming the path and the rule, with exit status 1', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-bad-'));
  const path = join(dir, 'bad.json');
  (await import('node:fs')).writeFileSync(path, JSON.stringify({ log: [{ pattern: 'x', level: 'loud' }] }));
  const err = await t.throwsAsync(
    run(process.execPath, ['--import', 'tsx', MAIN, '-config', path], { env: { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data') } }),
  );
  t.is((err as { code?: number }).code, 1);
  t.regex((err as unknown as { stderr: string }).stderr, /log\[0\]\.level "loud": must be one of debug, info, warn, error/);
});

test('-version prints a semantic version, -h the usage, and -dump-resources the sorted registrations', async (t) => {
  const version = await run(process.execPath, ['--import', 'tsx', MAIN, '-version']);
  t.regex(version.stdout, /^platform-server \d+\.\d+\.\d+\n$/);
  const help = await run(process.execPath, ['--import', 'tsx', MAIN, '-h']);
  t.regex(help.stdout, /-dump-resources <filepath>/);
  const out = join(mkdtempSync(join(tmpdir(), 'platform-dump-')), 'resources.json');
  await run(process.execPath, ['--import', 'tsx', MAIN, '-dump-resources', out]);
  const dump = JSON.parse(readFileSync(out, 'utf8')) as { api: string; model: string; attribute_schema: { properties?: object } }[];
  const keys = dump.map((d) => `${d.api} ${d.model}`);
  t.deepEqual(keys, [...keys].sort());
  const fakeSensor = dump.find((d) => d.api === 'core:component:sensor' && d.model === 'fake');
  t.truthy(fakeSensor?.attribute_schema.properties && 'readings' in fakeSensor.attribute_schema.properties);
  const unknown = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', MAIN, '-bogus']));
  t.is((unknown as { code?: number }).code, 2);
  t.regex((unknown as unknown as { stderr: string }).stderr, /flag provided but not defined: -bogus/);
});

test('-dump-resources also lists the models of the modules in the plugins folder', async (t) => {
  const plugins = mkdtempSync(join(tmpdir(), 'platform-dump-plugins-'));
  cpSync(fileURLToPath(new URL('../../plugins/examples/weather', import.meta.url)), join(plugins, 'weather'), { recursive: true });
  const out = join(plugins, 'resources.json');
  await run(process.execPath, ['--import', 'tsx', MAIN, '-dump-resources', out], { env: { ...process.env, PLATFORM_PLUGINS_DIR: plugins } });
  const dump = JSON.parse(readFileSync(out, 'utf8')) as { api: string; model: string; module_id?: string }[];
  const modular = dump.filter((d) => d.module_id === 'acme:weather');
  t.true(modular.length >= 1);
  t.true(modular.every((d) => d.model.startsWith('acme:weather:')));
  t.truthy(dump.find((d) => d.model === 'fake' && d.api === 'core:component:sensor' && d.module_id === undefined));
});
