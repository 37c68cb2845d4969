// module.json validation and the plugins folder: each rule broken is named with its field.
import test from 'ava';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readManifest } from './manifest.js';
import { pluginsFolder, scanPluginsFolder } from './plugins-folder.js';

const examples = fileURLToPath(new URL('../examples/', import.meta.url));

function moduleDir(manifest: unknown, files: Record<string, string> = { 'index.js': 'export default {}' }): string {
  const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
  writeFileSync(join(dir, 'module.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const good = {
  module_id: 'acme:weather',
  version: '1.2.0',
  entrypoint: 'index.js',
  models: [{ api: 'core:component:sensor', model: 'acme:weather:thermometer' }],
};

test('the example modules have valid manifests', (t) => {
  const weather = readManifest(join(examples, 'weather'));
  t.is(weather.manifest.module_id, 'acme:weather');
  t.is(weather.entrypoint, join(examples, 'weather', 'index.js'));
  t.deepEqual(readManifest(join(examples, 'counter')).manifest.models, [{ api: 'core:component:sensor', model: 'acme:counter:ticks' }]);
});

test('every broken rule names its field', (t) => {
  const cases: [unknown, RegExp][] = [
    ['{not json', /module\.json: is not valid JSON/],
    [[], /module\.json: must be a JSON object/],
    [{ ...good, module_id: 'weather' }, /module\.json module_id "weather": must have the shape <namespace>:<name>/],
    [{ ...good, version: 'one' }, /module\.json version "one": must be a semantic version/],
    [{ ...good, version: '^1.2' }, /module\.json version "\^1\.2": must be a semantic version/],
    [{ ...good, entrypoint: 'index.py' }, /module\.json entrypoint "index\.py": must be a \.js, \.mjs, \.ts file/],
    [{ ...good, entrypoint: 'missing.js' }, /module\.json entrypoint "missing\.js": names a file that does not exist/],
    [{ ...good, entrypoint: '../index.js' }, /module\.json entrypoint "\.\.\/index\.js": must be a path inside the module folder/],
    [{ ...good, models: [] }, /module\.json models \[\]: must list at least one model/],
    [
      { ...good, models: [{ api: 'sensor', model: 'acme:weather:t' }] },
      /module\.json models\[0\]\.api "sensor": must have the shape <namespace>:<kind>:<subtype>/,
    ],
    [
      { ...good, models: [{ api: 'core:component:sensor', model: 'thermometer' }] },
      /module\.json models\[0\]\.model "thermometer": must be a triplet <namespace>:<module>:<model> that starts with the module_id acme:weather/,
    ],
    [{ ...good, models: [{ api: 'core:component:sensor', model: 'other:mod:t' }] }, /starts with the module_id acme:weather/],
    [{ ...good, models: [good.models[0], good.models[0]] }, /module\.json models\[1\].*: lists the same api and model twice/],
    [{ ...good, extra: 1 }, /module\.json: unknown field\(s\) extra/],
    [{ version: '1.0.0' }, /module\.json module_id: is required and must be a string/],
  ];
  for (const [manifest, message] of cases) {
    const error = t.throws(() => readManifest(moduleDir(manifest)), { name: 'ConfigError' }, JSON.stringify(manifest));
    t.regex(error!.message, message);
  }
});

test('the plugins folder is $PLATFORM_PLUGINS_DIR, else module_dir (relative to the config file), else ~/.platform/plugins', (t) => {
  t.deepEqual(pluginsFolder({ env: '/env/plugins', moduleDir: '/cfg/plugins', home: '/home/u' }), { path: '/env/plugins', from: 'PLATFORM_PLUGINS_DIR' });
  t.deepEqual(pluginsFolder({ moduleDir: '/cfg/plugins', home: '/home/u' }), { path: '/cfg/plugins', from: 'module_dir' });
  t.deepEqual(pluginsFolder({ moduleDir: 'mods', configPath: '/etc/robot/config.json' }), { path: '/etc/robot/mods', from: 'module_dir' });
  t.deepEqual(pluginsFolder({ home: '/home/u' }), { path: '/home/u/.platform/plugins', from: 'default' });
});

test('scanning keeps valid folders and reports broken ones; other entries are ignored', (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'plugins-'));
  const ok = join(folder, 'weather');
  mkdirSync(ok);
  writeFileSync(join(ok, 'module.json'), JSON.stringify(good));
  writeFileSync(join(ok, 'index.js'), '');
  mkdirSync(join(folder, 'broken'));
  writeFileSync(join(folder, 'broken', 'module.json'), '{}');
  mkdirSync(join(folder, 'no-manifest'));
  writeFileSync(join(folder, 'README.txt'), 'not a module');
  const found = scanPluginsFolder(folder);
  t.deepEqual(
    found.map((f) => f.dir),
    [join(folder, 'broken'), ok],
  );
  t.true('error' in found[0] && /module_id: is required/.test(found[0].error.message));
  t.true('package' in found[1] && found[1].package.manifest.version === '1.2.0');
  t.deepEqual(scanPluginsFolder(join(folder, 'absent')), []);
});

test('apis: each names an api, a .proto inside the folder and a fully qualified service', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-manifest-apis-'));
  writeFileSync(join(dir, 'index.js'), 'export default {}');
  writeFileSync(join(dir, 'widget.proto'), 'syntax = "proto3";');
  const base = { module_id: 'acme:widget', version: '0.1.0', entrypoint: 'index.js', models: [{ api: 'acme:component:widget', model: 'acme:widget:spinner' }] };
  const write = (apis: unknown) => writeFileSync(join(dir, 'module.json'), JSON.stringify({ ...base, apis }));
  write([{ api: 'acme:component:widget', proto: 'widget.proto', service: 'acme.widget.v1.WidgetService' }]);
  t.deepEqual(readManifest(dir).manifest.apis, [{ api: 'acme:component:widget', proto: 'widget.proto', service: 'acme.widget.v1.WidgetService' }]);
  write([{ api: 'acme:component:widget', proto: 'missing.proto', service: 'acme.widget.v1.WidgetService' }]);
  t.throws(() => readManifest(dir), { message: /module\.json apis\[0\]\.proto "missing\.proto": names a file that does not exist/ });
  write([{ api: 'acme:component:widget', proto: '../widget.proto', service: 'acme.widget.v1.WidgetService' }]);
  t.throws(() => readManifest(dir), { message: /apis\[0\]\.proto "\.\.\/widget\.proto": must be a path inside the module folder/ });
  write([{ api: 'acme:widget', proto: 'widget.proto', service: 'acme.widget.v1.WidgetService' }]);
  t.throws(() => readManifest(dir), { message: /apis\[0\]\.api "acme:widget": must have the shape <namespace>:<kind>:<subtype>/ });
  write([{ api: 'acme:component:widget', proto: 'widget.proto', service: 'WidgetService' }]);
  t.throws(() => readManifest(dir), { message: /apis\[0\]\.service "WidgetService": must be a fully qualified service name/ });
});
