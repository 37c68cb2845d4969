import test from 'ava';
import { builtinModels } from '../../drivers/index.js';
import { dataManagerModel } from './data-manager-model.js';
import { ModelRegistry } from './model-registry.js';
import { checkPartConfig } from './part-config.js';

function registry(): ModelRegistry {
  const r = new ModelRegistry();
  for (const m of builtinModels) r.register(m);
  r.register(dataManagerModel); // as the cloud's registry does (cloud/parts/part-configs.ts)
  return r;
}

const errorsOf = (doc: unknown): string[] => {
  const result = checkPartConfig(doc, registry());
  return result.ok ? [] : result.errors;
};

test('a valid config passes and comes back parsed with defaults', (t) => {
  const result = checkPartConfig({ components: [{ name: 's', api: 'core:component:sensor', model: 'fake' }] }, registry());
  t.true(result.ok);
  if (result.ok) t.is(result.config.network.bind_address, 'localhost:8080');
});

test('top-level errors name the path and rule', (t) => {
  t.deepEqual(errorsOf({ debug: 'yes' }), ['debug "yes": must be true or false']);
  t.regex(errorsOf({ colour: 1 }).join('\n'), /colour/);
});

test('every per-resource error the runtime would report is refused', (t) => {
  const errors = errorsOf({
    components: [
      { name: 'a', api: 'core:widget:motor', model: 'fake' },
      { name: 'b', api: 'core:component:sensor', model: 'fake' },
      { name: 'b', api: 'core:component:sensor', model: 'fake' },
      { name: 'c', api: 'core:component:sensor', model: 'nosuch' },
      { name: 'd', api: 'core:component:sensor', model: 'fake', depends_on: ['e'] },
      { name: 'e', api: 'core:component:sensor', model: 'fake', depends_on: ['d'] },
      { name: 'f', api: 'core:component:board', model: 'fake', attributes: { analogs: 'x' } },
    ],
  });
  const text = errors.join('\n');
  t.regex(text, /components\[0\]\.api "core:widget:motor": kind must be component or service/);
  t.regex(text, /components\[2\]\.name "b": duplicate name, already used by components\[1\]/);
  t.regex(text, /components\[3\]\.model "nosuch": unknown model for core:component:sensor/);
  t.regex(text, /components\[4\] "d": dependency cycle: d -> e -> d/);
  t.regex(text, /components\[6\]\.attributes\.analogs/);
  t.is(errors.length, 6);
});

test('a modular model is left to the machine, and cloud credentials are refused', (t) => {
  t.deepEqual(errorsOf({ components: [{ name: 'w', api: 'acme:component:sensor', model: 'acme:weather:station' }] }), []);
  t.deepEqual(errorsOf({ cloud: { id: 'p', secret: 's' } }), ["cloud: must not be saved in the cloud: a machine's credentials stay in its own file"]);
});

test('a data manager and capture service_configs are checked as the runtime checks them', (t) => {
  const dataManager = (attributes: Record<string, unknown> = {}) => ({ name: 'dm', api: 'core:service:data_manager', model: 'builtin', attributes });
  const sensor = (method: Record<string, unknown>) => ({
    name: 's',
    api: 'core:component:sensor',
    model: 'fake',
    service_configs: [{ type: 'data_manager', attributes: { capture_methods: [method] } }],
  });
  t.deepEqual(errorsOf({ components: [sensor({ method: 'Readings', capture_frequency_hz: 20 })], services: [dataManager()] }), []);
  t.deepEqual(errorsOf({ components: [sensor({ method: 'Readings', capture_frequency_hz: 0 })], services: [dataManager()] }), [
    'components[0].service_configs[0].attributes.capture_methods[0].capture_frequency_hz 0: must be greater than 0 (set disabled to stop capturing)',
  ]);
  t.regex(
    errorsOf({ components: [sensor({ method: 'GetImage', capture_frequency_hz: 1 })], services: [dataManager()] }).join('\n'),
    /unknown capture method for core:component:sensor; known: Readings/,
  );
  t.regex(
    errorsOf({ services: [dataManager({ sync_interval_mins: -1 })] }).join('\n'),
    /services\[0\]\.attributes\.sync_interval_mins -1: must be greater than 0/,
  );
});

test('packages: entries are checked with path and rule, and ${packages.NAME} must name a listed package', (t) => {
  const model = (path: string) => ({ name: 'm', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: path } });
  t.deepEqual(errorsOf({ packages: [{ name: 'shapes', package: 'org1', type: 'ml_model' }] }), [
    'packages[0].package "org1": must be <organization id>/<model name>',
  ]);
  t.deepEqual(errorsOf({ packages: [{ name: 'shapes', package: 'org1/shapes', type: 'docker' }] }), ['packages[0].type "docker": must be "ml_model"']);
  t.deepEqual(errorsOf({ services: [model('${packages.shapes}/model.onnx')] }), [
    'services[0].attributes: ${packages.shapes} names no package in "packages" (listed: none)',
  ]);
  const ok = checkPartConfig(
    { packages: [{ name: 'shapes', package: 'org1/shapes', type: 'ml_model' }], services: [model('${packages.shapes}/model.onnx')] },
    registry(),
  );
  t.true(ok.ok, JSON.stringify(ok));
  if (ok.ok) t.deepEqual(ok.config.packages, [{ name: 'shapes', package: 'org1/shapes', version: 'latest', type: 'ml_model' }]);
});

test('a top-level error does not hide the resources’ own errors: every error is listed', (t) => {
  const errors = errorsOf({
    session: { heartbeat_window: 'soon' },
    components: [
      { name: 'b', api: 'core:component:board', model: 'fake' },
      // A gpio motor without an encoder needs max_rpm.
      { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '1', dir: '2' } } },
    ],
  });
  t.is(errors.length, 2, errors.join('\n'));
  t.regex(errors[0], /^session\.heartbeat_window "soon"/);
  t.regex(errors[1], /^components\[1\]\.attributes\.max_rpm/);
  // A resource section that itself breaks the schema is listed once, from the schema.
  const shape = errorsOf({ debug: 'yes', components: 'none' });
  t.is(shape.length, 2, shape.join('\n'));
});
