import test from 'ava';
import { InvalidConfigError, parseMachineConfig, parseMachineConfigText } from './machine-config.js';
import { parseResourceEntries } from './resource-entry.js';

const errorsOf = (input: unknown): string[] => {
  try {
    parseMachineConfig(input);
  } catch (err) {
    if (err instanceof InvalidConfigError) return err.errors.map((e) => e.message);
    throw err;
  }
  return [];
};

test('an empty config gets every default', (t) => {
  const config = parseMachineConfig({});
  t.deepEqual(config.components, []);
  t.deepEqual(config.services, []);
  t.deepEqual(config.modules, []);
  t.deepEqual(config.log, []);
  t.false(config.debug);
  t.false(config.disable_log_deduplication);
  t.is(config.network.bind_address, 'localhost:8080');
  t.is(config.maintenance, undefined);
});

test('top-level field types', (t) => {
  t.deepEqual(errorsOf({ debug: 'yes' }), ['debug "yes": must be true or false']);
  t.deepEqual(errorsOf({ disable_log_deduplication: 1 }), ['disable_log_deduplication 1: must be true or false']);
  t.deepEqual(errorsOf({ components: {} }), ['components {}: must be an array of resource entries']);
  t.deepEqual(errorsOf({ componets: [] }), ['(config): unknown field(s) componets']);
  t.deepEqual(errorsOf([]), ['(config): must be a JSON object']);
});

test('log rules: a pattern that is a valid regular expression, and a level among debug, info, warn, error', (t) => {
  t.deepEqual(
    errorsOf({ log: [{ pattern: 'platform.(', level: 'info' }] })[0].replace(/\(Invalid.*\)$/, ''),
    'log[0].pattern "platform.(": must be a valid regular expression ',
  );
  t.deepEqual(errorsOf({ log: [{ pattern: 'x', level: 'verbose' }] }), ['log[0].level "verbose": must be one of debug, info, warn, error']);
  t.deepEqual(errorsOf({ log: [{ level: 'info' }] }), ['log[0].pattern: must be a string']);
  t.is(parseMachineConfig({ log: [{ pattern: 'x', level: 'WARN' }] }).log[0].level, 'warn');
});

test('modules entries: module_id namespace:name, version and an optional log_level', (t) => {
  t.deepEqual(errorsOf({ modules: [{ module_id: 'weather', version: '1.0.0' }] }), ['modules[0].module_id "weather": must have the shape <namespace>:<name>']);
  t.deepEqual(errorsOf({ modules: [{ module_id: 'acme:weather', version: '' }] }), ['modules[0].version "": must not be empty']);
  t.deepEqual(errorsOf({ modules: [{ module_id: 'acme:weather', version: '1.0.0', log_level: 'chatty' }] }), [
    'modules[0].log_level "chatty": must be one of debug, info, warn, error',
  ]);
  t.is(parseMachineConfig({ modules: [{ module_id: 'acme:weather', version: '1.0.0', log_level: 'debug' }] }).modules[0].log_level, 'debug');
});

test('maintenance: sensor_name of the shape <namespace>:component:sensor/<name> and a required key', (t) => {
  t.deepEqual(errorsOf({ maintenance: { sensor_name: 'gate', maintenance_allowed_key: 'ok' } }), [
    'maintenance.sensor_name "gate": must have the shape <namespace>:component:sensor/<name>',
  ]);
  t.deepEqual(errorsOf({ maintenance: { sensor_name: 'core:component:motor/m', maintenance_allowed_key: 'ok' } }), [
    'maintenance.sensor_name "core:component:motor/m": must have the shape <namespace>:component:sensor/<name>',
  ]);
  t.deepEqual(errorsOf({ maintenance: { sensor_name: 'core:component:sensor/gate' } }), [
    'maintenance.maintenance_allowed_key: is required and must be a string',
  ]);
  t.deepEqual(parseMachineConfig({ maintenance: { sensor_name: 'acme:component:sensor/gate', maintenance_allowed_key: 'ok' } }).maintenance, {
    sensor_name: 'acme:component:sensor/gate',
    maintenance_allowed_key: 'ok',
  });
});

test('network.bind_address defaults to localhost:8080 and must be host:port', (t) => {
  t.is(parseMachineConfig({ network: {} }).network.bind_address, 'localhost:8080');
  t.is(parseMachineConfig({ network: { bind_address: '0.0.0.0:9090' } }).network.bind_address, '0.0.0.0:9090');
  t.deepEqual(errorsOf({ network: { bind_address: 'localhost' } }), [
    'network.bind_address "localhost": must have the shape host:port, e.g. localhost:8080 or 0.0.0.0:8080',
  ]);
  t.deepEqual(errorsOf({ network: { bind_address: 'localhost:70000' } }), ['network.bind_address "localhost:70000": port must be at most 65535']);
});

test('the agent object is validated with its defaults and ranges', (t) => {
  const config = parseMachineConfig({ agent: { advanced_settings: {} } });
  t.is(config.agent?.advanced_settings.platform_server_start_timeout_minutes, 10);
  t.is(config.agent?.version_control['platform-server'], 'stable');
  const errors = errorsOf({ agent: { additional_networks: { home: { type: 'wifi', priority: 1000 } } } });
  t.true(
    errors.some((e) => e.startsWith('agent.additional_networks.home.priority 1000:')),
    errors.join('; '),
  );
});

test('invalid JSON names the file and the position', (t) => {
  const err = t.throws(() => parseMachineConfigText('{"components": [', '/etc/platform.json'), { instanceOf: InvalidConfigError });
  t.is(err?.errorCode, 'CORE_ERR_CONFIG_INVALID');
  t.regex(err!.message, /^\/etc\/platform\.json: is not valid JSON: /);
});

const entryError = (components: unknown[], services: unknown[] = []) => parseResourceEntries(components, services).map((e) => e.error?.message);

test('resource envelope: name, api, model, attributes, depends_on and log_configuration', (t) => {
  t.deepEqual(entryError([{ api: 'core:component:sensor', model: 'fake' }]), ['components[0].name: is required and must be a string']);
  t.deepEqual(entryError([{ name: 'bad name', api: 'core:component:sensor', model: 'fake' }]), [
    'components[0].name "bad name": must start with a letter or digit and hold only letters, digits, _ and -',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component', model: 'fake' }]), [
    'components[0].api "core:component": must have the shape <namespace>:<kind>:<subtype>',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:widget:motor', model: 'fake' }]), [
    'components[0].api "core:widget:motor": kind must be component or service',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:service:vision', model: 'fake' }]), [
    'components[0].api "core:service:vision": a components entry must have kind component',
  ]);
  t.deepEqual(entryError([], [{ name: 'a', api: 'core:component:camera', model: 'fake' }]), [
    'services[0].api "core:component:camera": a services entry must have kind service',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'a:b' }]), [
    'components[0].model "a:b": must be a model name (fake) or a triplet <namespace>:<module>:<model>',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake', attributes: [] }]), ['components[0].attributes []: must be an object']);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake', depends_on: 'b' }]), [
    'components[0].depends_on "b": must be an array of resource names',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake', depends_on: ['a'] }]), [
    'components[0].depends_on[0] "a": a resource cannot depend on itself',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake', log_configuration: { level: 'loud' } }]), [
    'components[0].log_configuration.level "loud": must be one of debug, info, warn, error',
  ]);
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake', frame: {} }]), ['components[0]: unknown field(s) frame']);
  t.deepEqual(entryError(['x']), ['components[0]: must be an object with name, api and model']);
});

test('names are unique across components and services; the later entry gets the error', (t) => {
  t.deepEqual(entryError([{ name: 'a', api: 'core:component:sensor', model: 'fake' }], [{ name: 'a', api: 'core:service:vision', model: 'x' }]), [
    undefined,
    'services[0].name "a": duplicate name, already used by components[0]',
  ]);
});

test('log_configuration.level is case-insensitive (SPEC shows "Debug")', (t) => {
  const [entry] = parseResourceEntries([{ name: 'a', api: 'core:component:sensor', model: 'fake', log_configuration: { level: 'Debug' } }], []);
  t.is(entry.logLevel, 'debug');
});

test('network.web_allowed_hosts takes host names, addresses and *, and names a bad entry by its index', (t) => {
  const config = parseMachineConfig({ network: { web_allowed_hosts: ['robot.example.com', '10.0.0.5', '[fe80::1]', '*'] } });
  t.deepEqual(config.network.web_allowed_hosts, ['robot.example.com', '10.0.0.5', '[fe80::1]', '*']);
  t.deepEqual(errorsOf({ network: { web_allowed_hosts: ['robot.example.com:8081'] } }), [
    'network.web_allowed_hosts[0] "robot.example.com:8081": must be a host name or address without port, or *',
  ]);
  t.deepEqual(errorsOf({ network: { web_allowed_hosts: 'robot.example.com' } }), [
    'network.web_allowed_hosts "robot.example.com": must be an array of host names',
  ]);
});
