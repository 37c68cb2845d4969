// Warnings about module config that has no effect.
import test from 'ava';
import { parseMachineConfig } from '../config/machine-config.js';
import { configNotes, moduleIdOf } from './config-notes.js';

const config = parseMachineConfig({
  modules: [{ module_id: 'acme:weather', version: '1.2.0' }],
  components: [
    { name: 'thermo', api: 'core:component:sensor', model: 'acme:weather:thermometer', log_configuration: { level: 'debug' } },
    { name: 'ticks', api: 'core:component:sensor', model: 'acme:counter:ticks' },
    { name: 'builtin', api: 'core:component:sensor', model: 'fake', log_configuration: { level: 'debug' } },
  ],
});

test('a module model names its module; a bare model does not', (t) => {
  t.is(moduleIdOf('acme:weather:thermometer'), 'acme:weather');
  t.is(moduleIdOf('fake'), undefined);
});

test('log_configuration on a modular resource is said to be unused; on a built-in it is not', (t) => {
  t.deepEqual(configNotes(config, false), [
    {
      key: 'log_configuration:components[0]:acme:weather:thermometer',
      message:
        'components[0].log_configuration is not used for modular resources: the level of thermo comes from log_level on the modules entry of acme:weather',
      fields: { resource: 'thermo', module_id: 'acme:weather' },
    },
  ]);
});

test('-untrusted-env names every module it keeps from loading, configured or used', (t) => {
  const [untrusted] = configNotes(config, true);
  t.is(untrusted.message, 'modules are disabled by -untrusted-env: acme:weather, acme:counter not loaded; their resources are not built and report why');
  t.deepEqual(configNotes(parseMachineConfig({ components: [{ name: 'b', api: 'core:component:sensor', model: 'fake' }] }), true), []);
});
