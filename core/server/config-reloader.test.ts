// The one config reloader both runtimes use: what they provide at its declared points runs in order
// around the machine applying a config, at start and at each saved change; an unchanged config applies
// nothing; an invalid one keeps the running config and says why; after shutdown begins a save is refused.
import test from 'ava';
import { PassThrough } from 'node:stream';
import { status } from '@grpc/grpc-js';
import type { LoadedConfig } from '../config/config-file.js';
import type { ConfigSource } from '../config/config-source.js';
import { parseMachineConfig, InvalidConfigError } from '../config/machine-config.js';
import { KernelExtensions } from '../kernel/extension-points.js';
import type { Machine } from '../kernel/machine.js';
import { LogSink } from '../logging/sink.js';
import { ConfigReloader, configPreparation, configSettlement } from './config-reloader.js';

const loaded = (raw: Record<string, unknown>): LoadedConfig => ({ config: parseMachineConfig(raw), raw, text: JSON.stringify(raw) });

/** A config source whose next read the test sets, and whose watcher the test triggers. */
class TestSource implements ConfigSource {
  next: LoadedConfig | Error = loaded({ components: [] });
  changed: () => void = () => undefined;
  read(): LoadedConfig {
    if (this.next instanceof Error) throw this.next;
    return this.next;
  }
  async watch(onChange: () => void): Promise<void> {
    this.changed = onChange;
  }
  async close(): Promise<void> {}
  origin() {
    return { source: 'file' as const, path: '/nonexistent/platform.json' };
  }
}

async function setup() {
  const calls: string[] = [];
  const machine = {
    apply: async (config: { components: { name: string }[] }) => void calls.push(`machine.apply ${config.components.map((c) => c.name).join(',')}`),
    configErrors: () => [],
    statuses: () => [],
  } as unknown as Machine;
  const extensions = new KernelExtensions();
  extensions.provide(configPreparation, (_next, previous) => void calls.push(`first ${previous ? 'change' : 'start'}`));
  extensions.provide(configPreparation, async () => void calls.push('second'));
  extensions.provide(configSettlement, () => void calls.push('settled'));
  const sink = await LogSink.create({ destination: new PassThrough() });
  const source = new TestSource();
  const reloader = new ConfigReloader(source, machine, sink, extensions, { debug: false, revealDiffs: false });
  return { calls, source, reloader };
}

const motor = { name: 'm', api: 'rdk:component:motor', model: 'rdk:builtin:fake' };

test('at start and at a change: the preparation steps in order, the machine, then the settlement steps', async (t) => {
  const { calls, source, reloader } = await setup();
  reloader.read();
  await reloader.start();
  t.deepEqual(calls, ['first start', 'second', 'machine.apply ', 'settled']);
  calls.length = 0;
  source.next = loaded({ components: [motor] });
  await reloader.reload();
  t.deepEqual(calls, ['first change', 'second', 'machine.apply m', 'settled']);
  t.is(reloader.view().revision, 2);
});

test('an unchanged config applies nothing; an invalid one keeps the running config and is the problem', async (t) => {
  const { calls, source, reloader } = await setup();
  reloader.read();
  await reloader.start();
  calls.length = 0;
  let settled = 0;
  reloader.onConfigSettled = () => settled++;
  await reloader.reload();
  t.deepEqual(calls, []);
  source.next = t.throws(() => parseMachineConfig({ components: 'no' }), { instanceOf: InvalidConfigError })!;
  await reloader.reload();
  t.deepEqual(calls, []);
  t.regex(reloader.problem ?? '', /components/);
  t.true(reloader.view().errors.length > 0);
  t.deepEqual(reloader.loaded?.raw, { components: [] });
  t.is(settled, 2);
});

test('once shutdown begins, a save is refused as UNAVAILABLE and a change is not applied', async (t) => {
  const { calls, source, reloader } = await setup();
  reloader.read();
  await reloader.start();
  calls.length = 0;
  reloader.stop();
  source.next = loaded({ components: [motor] });
  await reloader.reload();
  t.deepEqual(calls, []);
  const refused = await t.throwsAsync(reloader.save('{}'));
  t.is((refused as unknown as { code: number }).code, status.UNAVAILABLE);
});
