// Version changes while running, on a Machine with a ModuleHost (no server): a newer folder within the
// pinned range replaces the loaded module, an exact pin goes back, and a resource whose module leaves
// the config says how to add it back.
import test from 'ava';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { parseMachineConfig } from '../config/machine-config.js';
import { createHarness } from '../kernel/fixtures/harness.js';
import { defaultKernelOptions } from '../kernel/options.js';
import { LogSink } from '../logging/sink.js';
import { ModuleHost, provideModuleHostExtensions } from './module-host.js';
import { defaultModuleOptions } from './options.js';

const WEATHER = fileURLToPath(new URL('../../plugins/examples/weather', import.meta.url));
const thermo = { name: 'thermo', api: 'core:component:sensor', model: 'acme:weather:thermometer', attributes: { drift_c: 0 } };

test.serial('a newer folder within the pinned range replaces the loaded module; an exact pin goes back; leaving the config is explained', async (t) => {
  const plugins = mkdtempSync(join(tmpdir(), 'plugins-'));
  cpSync(WEATHER, join(plugins, 'weather'), { recursive: true });
  const h = await createHarness();
  const output = new PassThrough();
  const text: string[] = [];
  output.on('data', (d: Buffer) => text.push(d.toString()));
  const sink = await LogSink.create({ destination: output, deduplicate: false });
  const host = new ModuleHost(h.machine, h.registry, sink, defaultModuleOptions({ pluginsDirEnv: plugins, settleMs: 50 }), defaultKernelOptions());
  provideModuleHostExtensions(h.extensions, () => host);
  const loaded = () =>
    text
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => /^module acme:weather .* loaded$/.test(l.msg))
      .map((l) => l.version);
  const apply = async (config: unknown) => {
    const parsed = parseMachineConfig(config);
    await host.apply(parsed);
    await h.machine.apply(parsed);
  };
  t.teardown(async () => {
    await host.close();
    await h.stop();
    await sink.close();
  });

  await apply({ modules: [{ module_id: 'acme:weather', version: '^1.2' }], components: [thermo] });
  t.is(h.machine.status('thermo')?.state, 'ready');
  t.is(h.machine.status('thermo')?.revision, 1);
  t.deepEqual(loaded(), ['1.2.0']);

  // Installing 1.3.0 next to 1.2.0: the range now selects it, and the resource is rebuilt on its code.
  cpSync(join(plugins, 'weather'), join(plugins, 'weather-1.3.0'), { recursive: true });
  const manifest = join(plugins, 'weather-1.3.0', 'module.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"1.2.0"', '"1.3.0"'));
  await h.waitFor(() => h.machine.status('thermo')?.revision === 2 && h.machine.status('thermo')?.state === 'ready', 60_000);
  t.deepEqual(loaded(), ['1.2.0', '1.3.0']);
  t.like(await h.machine.resource('thermo', SENSOR_API).getReadings({}), { temperature: 20, calls: 1 });

  // Rewriting module.json in place reloads the module and rebuilds its resources.
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"description": "', '"description": "Edited. '));
  await h.waitFor(() => h.machine.status('thermo')?.revision === 3 && h.machine.status('thermo')?.state === 'ready', 60_000);
  t.deepEqual(loaded(), ['1.2.0', '1.3.0', '1.3.0']);

  // An exact pin selects 1.2.0 again.
  await apply({ modules: [{ module_id: 'acme:weather', version: '1.2.0' }], components: [thermo] });
  t.is(h.machine.status('thermo')?.state, 'ready');
  t.is(h.machine.status('thermo')?.revision, 4);
  t.deepEqual(loaded(), ['1.2.0', '1.3.0', '1.3.0', '1.2.0']);

  // Without its modules entry the module is unloaded; the resource says what to add.
  await apply({ components: [thermo] });
  t.is(h.machine.status('thermo')?.state, 'unhealthy');
  t.is(
    h.machine.status('thermo')?.error,
    'components[0].model "acme:weather:thermometer": is a model of module acme:weather, which is not in the config\'s modules: add {"module_id": "acme:weather", "version": "<version>"} (the plugins folder has version 1.2.0, 1.3.0)',
  );
  t.is(h.registry.modelsOf('core:component:sensor').includes('acme:weather:thermometer'), false);
});

test.serial('an unreadable plugins folder is logged and its modules reported missing; the machine runs on', async (t) => {
  const notAFolder = join(mkdtempSync(join(tmpdir(), 'plugins-')), 'file');
  writeFileSync(notAFolder, 'not a folder');
  const h = await createHarness();
  const output = new PassThrough();
  const text: string[] = [];
  output.on('data', (d: Buffer) => text.push(d.toString()));
  const sink = await LogSink.create({ destination: output });
  const host = new ModuleHost(h.machine, h.registry, sink, defaultModuleOptions({ pluginsDirEnv: notAFolder }), defaultKernelOptions());
  provideModuleHostExtensions(h.extensions, () => host);
  t.teardown(async () => {
    await host.close();
    await h.stop();
    await sink.close();
  });
  const config = parseMachineConfig({
    modules: [{ module_id: 'acme:weather', version: '1.2.0' }],
    components: [thermo, { name: 'builtin', api: 'core:component:sensor', model: 'fake' }],
  });
  await host.apply(config);
  await h.machine.apply(config);
  t.is(h.machine.status('builtin')?.state, 'ready');
  t.regex(h.machine.status('thermo')?.error ?? '', /module acme:weather is not installed in the plugins folder/);
  const logged = text
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  t.true(logged.some((l) => l.msg === 'cannot scan the plugins folder' && /ENOTDIR/.test(l.error)));
});
