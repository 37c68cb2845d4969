// The level of a modular resource (SPEC.md "Limits"): its module's log_level beats the `log` rules,
// log_configuration is not used for it, debug mode overrides everything, and every line carries module_id.
import test from 'ava';
import { defineModel } from '../../plugins/contract.js';
import { createHarness, generic } from '../kernel/fixtures/harness.js';
import { moduleLogLevel } from '../kernel/extension-points.js';
import { genericAttributes, genericModel } from '../kernel/fixtures/generic-model.js';
import type { LevelName } from '../config/log-levels.js';

const modular = (model: string) => defineModel({ api: 'test:component:generic', model, attributes: genericAttributes, driver: genericModel.driver });
const entry = (name: string, model: string, extra: Record<string, unknown> = {}) => ({ ...generic(name, { label: name }), model, ...extra });

async function machineWith(levels: Record<string, LevelName | undefined>) {
  const h = await createHarness();
  h.registry.register(modular('acme:loud:recorder'), 'acme:loud');
  h.registry.register(modular('acme:quiet:recorder'), 'acme:quiet');
  h.registry.register(modular('acme:plain:recorder'), 'acme:plain');
  h.extensions.provide(moduleLogLevel, (id) => levels[id]);
  return h;
}

const constructedLines = (h: { lines(): Record<string, unknown>[] }) =>
  h
    .lines()
    .filter((l) => l.msg === 'generic constructed')
    .map((l) => `${String(l.logger).split('.').pop()} ${l.module_id ?? '-'}`)
    .sort();

test.serial('a module at debug shows its debug lines, a module at info does not; rules apply only where the module sets no level', async (t) => {
  const h = await machineWith({ 'acme:loud': 'debug', 'acme:quiet': 'info', 'acme:plain': undefined });
  await h.apply({
    // The rule asks for debug on every generic resource: it loses to acme:quiet's own info level.
    log: [{ pattern: 'platform.components.generic.*', level: 'debug' }],
    components: [
      entry('a', 'acme:loud:recorder'),
      // log_configuration is not used for modular resources: acme:quiet's level applies.
      entry('b', 'acme:quiet:recorder', { log_configuration: { level: 'debug' } }),
      entry('c', 'acme:plain:recorder'),
      generic('builtin'),
    ],
  });
  t.true(h.machine.statuses().every((s) => s.state === 'ready'));
  // Worker lines arrive on their own channel; each worker's info line follows its debug line.
  await h.waitFor(() => h.lines().filter((l) => l.msg === 'generic info line').length === 4);
  t.deepEqual(constructedLines(h), ['a acme:loud', 'builtin -', 'c acme:plain']);
  // Every line a module driver writes carries its module_id; built-in lines do not.
  const info = h.lines().filter((l) => l.msg === 'generic info line');
  t.deepEqual(info.map((l) => `${String(l.logger).split('.').pop()} ${l.module_id ?? '-'}`).sort(), [
    'a acme:loud',
    'b acme:quiet',
    'builtin -',
    'c acme:plain',
  ]);
  await h.stop();
});

test.serial('a module at warn hides its info lines, and debug mode overrides every module level', async (t) => {
  const h = await machineWith({ 'acme:loud': 'warn', 'acme:quiet': 'error', 'acme:plain': undefined });
  await h.apply({ components: [entry('a', 'acme:loud:recorder'), entry('b', 'acme:quiet:recorder')] });
  t.deepEqual(h.lines().filter((l) => l.msg === 'generic info line').length, 0);
  await h.apply({
    debug: true,
    components: [entry('a', 'acme:loud:recorder', { attributes: { label: 'again' } }), entry('b', 'acme:quiet:recorder', { attributes: { label: 'again' } })],
  });
  await h.waitFor(() => constructedLines(h).length === 2);
  t.deepEqual(constructedLines(h), ['a acme:loud', 'b acme:quiet']);
  await h.stop();
});
