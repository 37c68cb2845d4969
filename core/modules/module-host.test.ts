// Modules end to end: the real platform-server with a plugins folder holding copies of the example
// modules, driven through the real gRPC clients. Few, fat, serial tests: each starts a runtime.
import test from 'ava';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { status as grpcStatus } from '@grpc/grpc-js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from '../server/testing/grpc.js';
import { eventually, spawnRuntime, type SpawnedRuntime } from '../server/testing/spawn-runtime.js';

const EXAMPLES = fileURLToPath(new URL('../../plugins/examples/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../plugins/host/fixtures/', import.meta.url));
const WAIT = 60_000;

function pluginsFolder(...modules: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'plugins-'));
  for (const name of modules) addModule(dir, name);
  return dir;
}
function addModule(dir: string, name: string): void {
  cpSync(join(['flaky', 'timebomb'].includes(name) ? FIXTURES : EXAMPLES, name), join(dir, name), { recursive: true });
}

const thermo = (attributes: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'thermo',
  api: 'core:component:sensor',
  model: 'acme:weather:thermometer',
  attributes: { base_c: 21, drift_c: 0, ...attributes },
  ...extra,
});
const ticks = { name: 'ticks', api: 'core:component:sensor', model: 'acme:counter:ticks' };
const builtin = { name: 'builtin', api: 'core:component:sensor', model: 'fake', attributes: { readings: { x: 1 } } };
const weather = (version = '1.2.0', log_level?: string) => ({ module_id: 'acme:weather', version, ...(log_level ? { log_level } : {}) });
const counter = (log_level?: string) => ({ module_id: 'acme:counter', version: '0.3.1', ...(log_level ? { log_level } : {}) });

interface Status {
  state: ResourceState;
  error: string;
  revision: number;
}

function clients(runtime: SpawnedRuntime) {
  const robot = new RobotServiceClient(runtime.address, insecure());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  return {
    sensors,
    read: async (name: string) => (await call(sensors, 'getReadings', { name })).readings as Record<string, unknown>,
    async statuses(): Promise<Record<string, Status>> {
      const response = await call(robot, 'getMachineStatus', {});
      return Object.fromEntries(response.resources.map((r: Status & { name: { name: string } }) => [r.name.name, r]));
    },
  };
}

const ready = (s: Status | undefined) => s?.state === ResourceState.RESOURCE_STATE_READY;
const lines = (runtime: SpawnedRuntime, msg: string | RegExp, moduleId?: string) =>
  runtime.logs().filter((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(String(l.msg))) && (moduleId === undefined || l.module_id === moduleId));

test.serial('modules found at start are served; a missing module, a version mismatch, a hot add and a hot removal touch only that module', async (t) => {
  const plugins = pluginsFolder('weather');
  const config = (modules: unknown[], components: unknown[]) => ({ modules, components });
  const runtime = await spawnRuntime(config([weather(), counter()], [thermo(), ticks, builtin]), { env: { PLATFORM_PLUGINS_DIR: plugins } });
  t.teardown(() => runtime.stop());
  const c = clients(runtime);

  // Discovery at start: the weather module's thermometer is served like a built-in sensor.
  t.deepEqual(await c.read('thermo'), { temperature: 21, unit: 'celsius', calls: 1 });
  let s = await c.statuses();
  t.true(ready(s.thermo) && ready(s.builtin));
  t.is(s.ticks.state, ResourceState.RESOURCE_STATE_UNHEALTHY);
  t.regex(s.ticks.error, new RegExp(`components\\[1\\]\\.model "acme:counter:ticks": module acme:counter is not installed in the plugins folder ${plugins}`));
  t.is(lines(runtime, 'module acme:weather 1.2.0 loaded', 'acme:weather').length, 1);
  t.is(runtime.logs().filter((l) => l.module_id === 'acme:counter' && /is not installed in the plugins folder/.test(String(l.msg))).length, 1);
  const missing = await t.throwsAsync(c.read('ticks'));
  t.is((missing as { code?: number }).code, grpcStatus.UNAVAILABLE);

  // Hot add: copying the folder in loads the module and brings its resource up, without a restart.
  addModule(plugins, 'counter');
  s = await eventually(
    () => c.statuses(),
    (x) => ready(x.ticks),
    WAIT,
  );
  t.deepEqual(await c.read('ticks'), { count: 0 });
  const thermoRevision = s.thermo.revision;
  const builtinRevision = s.builtin.revision;

  // A version mismatch is an error of that module's resources only.
  runtime.writeConfig(config([weather('2.0.0'), counter()], [thermo(), ticks, builtin]));
  s = await eventually(
    () => c.statuses(),
    (x) => x.thermo.state === ResourceState.RESOURCE_STATE_UNHEALTHY,
    WAIT,
  );
  t.regex(
    s.thermo.error,
    new RegExp(`module acme:weather version 2.0.0 is required by modules\\[0\\]\\.version, but the plugins folder has 1.2.0 \\(${plugins}/weather\\)`),
  );
  t.true(ready(s.ticks) && ready(s.builtin));
  t.is(s.builtin.revision, builtinRevision);
  t.deepEqual(await c.read('ticks'), { count: 1 });

  // Back on the installed version, with a modified modular resource.
  runtime.writeConfig(config([weather('^1.2'), counter()], [thermo({ base_c: 30 }), ticks, builtin]));
  await eventually(
    () => c.read('thermo'),
    (r) => r.temperature === 30,
    WAIT,
  );
  s = await c.statuses();
  t.true(s.thermo.revision > thermoRevision);

  // Hot removal: deleting the folder unloads the module; its resource reports why, the others run on.
  rmSync(join(plugins, 'weather'), { recursive: true });
  s = await eventually(
    () => c.statuses(),
    (x) => x.thermo.state === ResourceState.RESOURCE_STATE_UNHEALTHY,
    WAIT,
  );
  t.regex(s.thermo.error, /module acme:weather is not installed in the plugins folder/);
  t.true(ready(s.ticks) && ready(s.builtin));
  t.deepEqual(await c.read('ticks'), { count: 2 });
  t.is(lines(runtime, 'module acme:weather 1.2.0 unloaded', 'acme:weather').length >= 1, true);

  // A modular resource removed from the config goes away; the module stays loaded for the others.
  runtime.writeConfig(config([weather(), counter()], [builtin]));
  s = await eventually(
    () => c.statuses(),
    (x) => !x.ticks && !x.thermo,
    WAIT,
  );
  t.true(ready(s.builtin));
});

test.serial('per-module log levels: debug lines of a module at debug, none of a module at info, and a change while running', async (t) => {
  const plugins = pluginsFolder('weather', 'counter');
  // Deduplication off: a repeated debug line must not hide behind a "suppressing repeats" notice.
  const runtime = await spawnRuntime(
    { disable_log_deduplication: true, modules: [weather('1.2.0', 'debug'), counter('info')], components: [thermo(), ticks] },
    { env: { PLATFORM_PLUGINS_DIR: plugins } },
  );
  t.teardown(() => runtime.stop());
  const c = clients(runtime);
  await c.read('thermo');
  await c.read('thermo');
  await c.read('ticks');
  await eventually(
    () => lines(runtime, 'thermometer read').length,
    (n) => n === 2,
    WAIT,
  );
  const constructed = lines(runtime, 'thermometer constructed');
  t.is(constructed.length, 1);
  t.like(constructed[0], { level: 20, logger: 'platform.components.sensor.thermo', module_id: 'acme:weather', base_c: 21 });
  t.true(lines(runtime, 'thermometer read').every((l) => l.module_id === 'acme:weather' && l.level === 20));
  t.is(lines(runtime, 'ticks constructed').length, 0);
  t.is(lines(runtime, 'ticks read').length, 0);
  const before = await c.statuses();

  // Swap the levels while running. The `log` rule asks for debug on every sensor, and thermo's
  // log_configuration asks for debug too: both lose to the weather module's own info level.
  runtime.writeConfig({
    disable_log_deduplication: true,
    modules: [weather('1.2.0', 'info'), counter('debug')],
    log: [{ pattern: 'platform.components.sensor.*', level: 'debug' }],
    components: [thermo({}, { log_configuration: { level: 'debug' } }), ticks],
  });
  await eventually(
    async () => (await c.read('ticks'), lines(runtime, 'ticks read', 'acme:counter').length),
    (n) => n > 0,
    WAIT,
  );
  await c.read('thermo');
  await c.read('thermo');
  await c.read('ticks');
  await eventually(
    () => lines(runtime, 'ticks read', 'acme:counter').length,
    (n) => n >= 2,
    WAIT,
  );
  t.is(lines(runtime, 'thermometer read').length, 2, 'no thermometer debug lines after its module went to info');
  t.is(lines(runtime, 'ticks constructed').length, 0, 'the level changed in place, without a rebuild');
  const after = await c.statuses();
  t.is(after.ticks.revision, before.ticks.revision);
  t.is(after.thermo.revision, before.thermo.revision);
  const warning = runtime.logs().find((l) => /log_configuration is not used for modular resources/.test(String(l.msg)));
  t.like(warning, { level: 40, module_id: 'acme:weather', resource: 'thermo' });

  // Debug mode overrides every module level.
  runtime.writeConfig({ disable_log_deduplication: true, debug: true, modules: [weather('1.2.0', 'error'), counter('error')], components: [thermo(), ticks] });
  await eventually(
    async () => (await c.read('thermo'), lines(runtime, 'thermometer read').length),
    (n) => n > 2,
    WAIT,
  );
});

test.serial('a module that throws at load is retried with backoff; a crashed module driver is rebuilt; others are untouched', async (t) => {
  const plugins = pluginsFolder('weather', 'flaky', 'timebomb');
  writeFileSync(join(plugins, 'flaky', 'FAIL'), 'remove me to let the module load');
  writeFileSync(join(plugins, 'timebomb', 'BOMB'), 'remove me to defuse the module');
  const flaky = { name: 'flaky', api: 'core:component:sensor', model: 'acme:flaky:sensor' };
  const bomb = { name: 'bomb', api: 'core:component:sensor', model: 'acme:timebomb:sensor' };
  // module_dir in the config, rather than the environment variable.
  const runtime = await spawnRuntime({
    module_dir: plugins,
    modules: [weather(), { module_id: 'acme:flaky', version: '1.0.0' }, { module_id: 'acme:timebomb', version: '1.0.0' }],
    components: [thermo(), flaky, bomb, builtin],
  });
  t.teardown(() => runtime.stop());
  const c = clients(runtime);

  let s = await c.statuses();
  t.true(ready(s.thermo) && ready(s.builtin));
  t.regex(s.flaky.error, /module acme:flaky failed to load \(attempt \d+, next try in \d+ s\): flaky module refuses to load while FAIL exists/);
  const failed = lines(runtime, 'module acme:flaky failed to load', 'acme:flaky');
  t.true(failed.length >= 1);
  t.like(failed[0], { level: 50, attempt: 1 });

  // Once the cause is gone the module loads and its resource is built.
  rmSync(join(plugins, 'flaky', 'FAIL'));
  await eventually(
    () => c.statuses(),
    (x) => ready(x.flaky),
    WAIT,
  );
  t.deepEqual(await c.read('flaky'), { ok: true });

  // A driver of the module crashes: its worker ends, and the resource is rebuilt with backoff.
  s = await c.statuses();
  const { revision } = s.thermo;
  await call(c.sensors, 'doCommand', { name: 'thermo', command: { crash: true } });
  s = await eventually(
    () => c.statuses(),
    (x) => ready(x.thermo) && x.thermo.revision > revision,
    WAIT,
  );
  t.deepEqual(await c.read('thermo'), { temperature: 21, unit: 'celsius', calls: 1 });
  t.true(runtime.logs().some((l) => l.msg === 'resource failed' && l.resource === 'thermo' && /crashed/.test(String(l.error))));
  t.true(ready(s.flaky) && ready(s.builtin));
  t.deepEqual(await c.read('builtin'), { x: 1 });

  // Code the timebomb module left on the main thread throws: that is the module's crash, not the runtime's.
  s = await eventually(
    () => c.statuses(),
    (x) => /module acme:timebomb crashed \(attempt \d+, next try in \d+ s\): timebomb went off/.test(x.bomb.error),
    WAIT,
  );
  t.true(lines(runtime, 'module acme:timebomb crashed', 'acme:timebomb').length >= 1);
  t.true(ready(s.thermo) && ready(s.flaky) && ready(s.builtin));
  rmSync(join(plugins, 'timebomb', 'BOMB'));
  await eventually(
    () => c.statuses(),
    (x) => ready(x.bomb),
    WAIT,
  );
  t.deepEqual(await c.read('bomb'), { ticking: false });
  t.is(runtime.process.exitCode, null);
});

test.serial('-untrusted-env disables modules: one log line, and each modular resource says why', async (t) => {
  const plugins = pluginsFolder('weather');
  const runtime = await spawnRuntime(
    { modules: [weather()], components: [thermo(), ticks, builtin] },
    { env: { PLATFORM_PLUGINS_DIR: plugins }, args: ['-untrusted-env'] },
  );
  t.teardown(() => runtime.stop());
  const c = clients(runtime);
  const s = await c.statuses();
  t.true(ready(s.builtin));
  t.regex(s.thermo.error, /components\[0\]\.model "acme:weather:thermometer": is provided by module acme:weather, and modules are disabled by -untrusted-env/);
  t.regex(s.ticks.error, /is provided by module acme:counter, and modules are disabled by -untrusted-env/);
  // The module host's one notice (each resource's own config error is logged apart, as 'invalid config for resource ...').
  const notices = runtime
    .logs()
    .filter((l) => /modules are disabled by -untrusted-env/.test(String(l.msg)) && !String(l.msg).startsWith('invalid config for resource '));
  t.is(notices.length, 1);
  t.regex(String(notices[0].msg), /acme:weather, acme:counter not loaded/);
  t.is(lines(runtime, /^module .* loaded$/).length, 0);
  t.false(runtime.output().includes('-untrusted-env is accepted but not supported yet'));
});

test.serial('the plugins/README.md walkthrough: its config serves the example, and its sed line turns the debug lines off', async (t) => {
  const readme = readFileSync(fileURLToPath(new URL('../../plugins/README.md', import.meta.url)), 'utf8');
  const configText = /cat > \/tmp\/weather\.json <<'EOF'\n([\s\S]*?)\n\s*EOF/.exec(readme)![1];
  const [, from, to] = /sed -i 's\/(.*?)\/(.*?)\/' \/tmp\/weather\.json/.exec(readme)!;
  const { network: _network, ...config } = JSON.parse(configText) as Record<string, unknown>;
  t.true(readme.includes('cp -r plugins/examples/weather ~/.platform/plugins/'));
  const plugins = pluginsFolder('weather');
  const runtime = await spawnRuntime(config, { env: { PLATFORM_PLUGINS_DIR: plugins } });
  t.teardown(() => runtime.stop());
  const c = clients(runtime);
  t.like(await c.read('thermo'), { unit: 'celsius', calls: 1 });
  await eventually(
    () => lines(runtime, 'thermometer read', 'acme:weather').length,
    (n) => n === 1,
    WAIT,
  );
  t.is(lines(runtime, 'thermometer constructed', 'acme:weather').length, 1);

  const { network: _same, ...changed } = JSON.parse(configText.replace(from, to)) as Record<string, unknown>;
  t.notDeepEqual(changed, config);
  runtime.writeConfig(changed);
  await eventually(
    () => lines(runtime, 'config changed').length,
    (n) => n === 1,
    WAIT,
  );
  await eventually(
    () => lines(runtime, 'reconfigured').length,
    (n) => n === 1,
    WAIT,
  );
  t.like(await c.read('thermo'), { calls: 2 });
  t.is(lines(runtime, 'thermometer read').length, 1);
  t.is((await c.statuses()).thermo.revision, 1);
});
