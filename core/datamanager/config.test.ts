// The data manager's config: its attributes (defaults, ranges) and the service_configs of the resources
// it captures, each error naming its path and rule.
import test from 'ava';
import { homedir } from 'node:os';
import * as z from 'zod';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { defineModel } from '../../plugins/contract.js';
import { parseResourceEntries } from '../config/resource-entry.js';
import { resolveResources } from '../resource/resolve-resources.js';
import { registryWithBuiltins } from '../server/compose.js';
import { assembleDataManager } from '../resource/data-manager-assemble.js';
import type { DataManagerAttributes } from '../config/data-manager-attributes.js';
import { linkSettingsOf } from '../cloud-link/link-settings.js';

const sensor = (name: string, methods: unknown[], model = 'fake') => ({
  name,
  api: SENSOR_API,
  model,
  service_configs: [{ type: 'data_manager', attributes: { capture_methods: methods } }],
});
const manager = (attributes: Record<string, unknown> = {}) => ({ name: 'dm', api: 'core:service:data_manager', model: 'builtin', attributes });
const cloud = { id: 'part-1', secret: 's3cret', app_address: 'localhost:9' };

function resolve(components: unknown[], services: unknown[], registry = registryWithBuiltins()) {
  const entries = parseResourceEntries(components, services);
  assembleDataManager(entries, registry, linkSettingsOf(cloud, false));
  return new Map(resolveResources(entries, registry).map((r) => [r.key, r]));
}

test('the data manager attributes default as documented and it depends on what it captures', (t) => {
  const r = resolve([sensor('s1', [{ method: 'Readings', capture_frequency_hz: 20, tags: ['x'] }])], [manager()]);
  const dm = r.get('dm')!;
  t.is(dm.error, undefined);
  const a = dm.attributes as DataManagerAttributes;
  t.is(a.capture_dir, `${homedir()}/.platform/capture`);
  t.is(a.sync_interval_mins, 0.1);
  t.is(a.maximum_capture_file_size_bytes, 256 * 1024);
  t.is(a.maximum_num_sync_threads, 4);
  t.is(a.delete_every_nth_when_disk_full, 5);
  t.is(a.disk_usage_deletion_threshold, 0.9);
  t.is(a.capture_dir_deletion_threshold, 0.5);
  t.false(a.capture_disabled);
  t.false(a.sync_disabled);
  t.deepEqual(a._targets, [
    {
      resource: 's1',
      api: SENSOR_API,
      methods: [{ method: 'Readings', kind: 'tabular', driverMethod: undefined, frequencyHz: 20, additionalParams: {}, tags: ['x'] }],
    },
  ]);
  t.deepEqual(a._cloud, {
    partId: 'part-1',
    appAddress: 'localhost:9',
    credentials: { type: 'robot-secret', entity: 'part-1', payload: 's3cret' },
    allowInsecure: false,
  });
  t.deepEqual(dm.dependencies, ['s1']);
});

test('a frequency of 0 or less is an error of the resource, naming the path and the rule', (t) => {
  for (const hz of [0, -1]) {
    const r = resolve([sensor('s1', [{ method: 'Readings', capture_frequency_hz: hz }])], [manager()]);
    t.is(
      r.get('s1')!.error,
      `components[0].service_configs[0].attributes.capture_methods[0].capture_frequency_hz ${hz}: must be greater than 0 (set disabled to stop capturing)`,
    );
  }
});

test('an unknown method for the api is an error naming the known ones', (t) => {
  const r = resolve([sensor('s1', [{ method: 'GetImage', capture_frequency_hz: 1 }])], [manager()]);
  t.is(
    r.get('s1')!.error,
    'components[0].service_configs[0].attributes.capture_methods[0].method "GetImage": unknown capture method for core:component:sensor; known: Readings',
  );
  t.deepEqual(r.get('dm')!.dependencies, [], 'the data manager does not wait on a resource it cannot capture');
});

test('board Analogs and Gpios need the names in additional_params', (t) => {
  const board = (params: unknown) => ({
    name: 'b',
    api: 'core:component:board',
    model: 'fake',
    service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Gpios', capture_frequency_hz: 1, additional_params: params }] } }],
  });
  t.is(
    resolve([board({})], [manager()]).get('b')!.error,
    'components[0].service_configs[0].attributes.capture_methods[0].additional_params {}: must name at least one pin, e.g. {"pin_1": "..."}',
  );
  t.is(
    resolve([board({ pin_1: 3 })], [manager()]).get('b')!.error,
    'components[0].service_configs[0].attributes.capture_methods[0].additional_params {"pin_1":3}: every value must be a pin name (a non-empty string)',
  );
  t.is(resolve([board({ pin_1: '12' })], [manager()]).get('b')!.error, undefined);
});

test('service_configs shapes are checked: duplicates, unknown fields, types', (t) => {
  const twice = resolve(
    [
      sensor('s1', [
        { method: 'Readings', capture_frequency_hz: 1 },
        { method: 'Readings', capture_frequency_hz: 2 },
      ]),
    ],
    [manager()],
  );
  t.is(
    twice.get('s1')!.error,
    'components[0].service_configs[0].attributes.capture_methods[1].method "Readings": duplicate capture method, already listed at capture_methods[0]',
  );
  const unknown = resolve([sensor('s1', [{ method: 'Readings', capture_frequency_hz: 1, every: 2 }])], [manager()]);
  t.is(unknown.get('s1')!.error, 'components[0].service_configs[0].attributes.capture_methods[0]: unknown field(s) every');
  const notArray = resolve([{ name: 's1', api: SENSOR_API, model: 'fake', service_configs: {} }], []);
  t.is(notArray.get('s1')!.error, 'components[0].service_configs {}: must be an array of {type, attributes}');
});

test('disabled methods and capture_disabled capture nothing', (t) => {
  const disabled = resolve([sensor('s1', [{ method: 'Readings', capture_frequency_hz: 1, disabled: true }])], [manager()]);
  t.deepEqual((disabled.get('dm')!.attributes as DataManagerAttributes)._targets, []);
  const off = resolve([sensor('s1', [{ method: 'Readings', capture_frequency_hz: 1 }])], [manager({ capture_disabled: true })]);
  t.deepEqual((off.get('dm')!.attributes as DataManagerAttributes)._targets, []);
  t.deepEqual(off.get('dm')!.dependencies, []);
});

test('attribute ranges are enforced with path and rule', (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ sync_interval_mins: 0 }, 'services[0].attributes.sync_interval_mins 0: must be greater than 0'],
    [{ disk_usage_deletion_threshold: 1.5 }, 'services[0].attributes.disk_usage_deletion_threshold 1.5: disk_usage_deletion_threshold must be at most 1'],
    [{ maximum_capture_file_size_bytes: 10 }, 'services[0].attributes.maximum_capture_file_size_bytes 10: must be at least 1024'],
    [{ maximum_num_sync_threads: 0 }, 'services[0].attributes.maximum_num_sync_threads 0: must be at least 1'],
    [{ delete_every_nth_when_disk_full: 1 }, 'services[0].attributes.delete_every_nth_when_disk_full 1: must be at least 2'],
    [{ tags: [''] }, 'services[0].attributes.tags[0] "": must not be empty'],
    [{ _targets: [] }, 'services[0].attributes: unknown field(s) _targets'],
  ];
  for (const [attributes, error] of cases) t.is(resolve([], [manager(attributes)]).get('dm')!.error, error);
});

test('a second data manager is an error; the selective syncer becomes a dependency', (t) => {
  const r = resolve([{ name: 'gate', api: SENSOR_API, model: 'fake' }], [manager({ selective_syncer_name: 'gate' }), { ...manager(), name: 'dm2' }]);
  t.is(r.get('dm2')!.error, 'services[1].api "core:service:data_manager": only one data manager per machine; services[0] is the first');
  t.deepEqual(r.get('dm')!.dependencies, ['gate']);
});

test('a model may declare further capture methods, for its own resources only', (t) => {
  const registry = registryWithBuiltins();
  registry.register(
    defineModel({
      api: SENSOR_API,
      model: 'acme:weather:station',
      attributes: z.strictObject({}),
      driver: new URL('file:///nowhere/driver.js'),
      captureMethods: { Wind: { kind: 'tabular', driverMethod: 'captureWind' } },
    }),
  );
  const r = resolve(
    [sensor('w', [{ method: 'Wind', capture_frequency_hz: 2 }], 'acme:weather:station'), sensor('f', [{ method: 'Wind', capture_frequency_hz: 2 }])],
    [manager()],
    registry,
  );
  t.is(r.get('w')!.error, undefined);
  t.deepEqual((r.get('dm')!.attributes as DataManagerAttributes)._targets[0].methods[0], {
    method: 'Wind',
    kind: 'tabular',
    driverMethod: 'captureWind',
    frequencyHz: 2,
    additionalParams: {},
    tags: [],
  });
  t.regex(r.get('f')!.error!, /unknown capture method for core:component:sensor; known: Readings$/);
});

test('defineModel refuses a malformed capture method declaration at registration', (t) => {
  const declare = (captureMethods: unknown) => () =>
    defineModel({ api: SENSOR_API, model: 'x', attributes: z.strictObject({}), driver: new URL('file:///d.js'), captureMethods: captureMethods as never });
  t.throws(declare({ wind: { kind: 'tabular', driverMethod: 'w' } }), { message: /captureMethods.wind: a capture method name starts with a capital letter/ });
  t.throws(declare({ Wind: { kind: 'table', driverMethod: 'w' } }), { message: /captureMethods.Wind.kind: must be "tabular" or "binary"/ });
  t.throws(declare({ Wind: { kind: 'binary' } }), { message: /captureMethods.Wind.driverMethod: must name a method of the driver/ });
});
