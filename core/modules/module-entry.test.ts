// The config's `modules` entries (SPEC.md: module_id, version, log_level): each broken rule is named.
import test from 'ava';
import { parseMachineConfig } from '../config/machine-config.js';

const errorOf = (modules: unknown) => {
  try {
    parseMachineConfig({ modules });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

test('valid entries: an exact version or a range, with an optional level in any case', (t) => {
  const config = parseMachineConfig({
    modules: [
      { module_id: 'acme:weather', version: '1.2.0', log_level: 'DEBUG' },
      { module_id: 'acme:counter', version: '^0.3' },
    ],
  });
  t.deepEqual(config.modules, [
    { module_id: 'acme:weather', version: '1.2.0', log_level: 'debug' },
    { module_id: 'acme:counter', version: '^0.3' },
  ]);
});

test('broken entries name the field and the rule', (t) => {
  t.is(errorOf([{ module_id: 'weather', version: '1.0.0' }]), 'modules[0].module_id "weather": must have the shape <namespace>:<name>');
  t.is(
    errorOf([{ module_id: 'acme:weather', version: 'latest!' }]),
    'modules[0].version "latest!": must be a semantic version such as 1.2.0 or a range such as ^1.2',
  );
  t.is(errorOf([{ module_id: 'acme:weather', version: '1.0.0', log_level: 'loud' }]), 'modules[0].log_level "loud": must be one of debug, info, warn, error');
  t.is(
    errorOf([
      { module_id: 'acme:weather', version: '1.0.0' },
      { module_id: 'acme:weather', version: '2.0.0' },
    ]),
    'modules[1].module_id "acme:weather": duplicate module, already listed at modules[0]',
  );
  t.regex(errorOf([{ module_id: 'acme:weather', version: '1.0.0', level: 'debug' }])!, /modules\[0\]: unknown field\(s\) level/);
});
