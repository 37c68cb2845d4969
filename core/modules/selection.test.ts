// Which folder a config `modules` entry selects, and the words used when none fits.
import test from 'ava';
import type { ModuleEntry } from '../config/machine-config.js';
import type { ModulePackage } from '../../plugins/host/manifest.js';
import type { FoundFolder } from '../../plugins/host/plugins-folder.js';
import { selectModules } from './selection.js';

const pkg = (module_id: string, version: string, dir = `/p/${module_id.split(':')[1]}-${version}`): FoundFolder => ({
  dir,
  package: { dir, entrypoint: `${dir}/index.js`, signature: 's', manifest: { module_id, version, entrypoint: 'index.js', models: [] } } satisfies ModulePackage,
});
const entry = (module_id: string, version: string): ModuleEntry => ({ module_id, version });

test('an exact version selects that folder; a range selects the highest match', (t) => {
  const found = [pkg('acme:weather', '1.2.0'), pkg('acme:weather', '1.3.1'), pkg('acme:weather', '2.0.0')];
  t.is(selectModules([entry('acme:weather', '1.2.0')], found, '/p')[0].package?.manifest.version, '1.2.0');
  t.is(selectModules([entry('acme:weather', '^1.2')], found, '/p')[0].package?.manifest.version, '1.3.1');
});

test('a missing module and a version mismatch are problems of that module only, named with the config path', (t) => {
  const found = [pkg('acme:weather', '1.2.0'), { dir: '/p/broken', error: new Error('/p/broken/module.json version: must be a semantic version') }];
  const [missing, mismatch, fine] = selectModules(
    [entry('acme:counter', '0.3.1'), entry('acme:weather', '2.0.0'), entry('acme:other', '1.0.0')],
    [...found, pkg('acme:other', '1.0.0')],
    '/p',
  );
  t.is(
    missing.problem,
    'module acme:counter is not installed in the plugins folder /p; 1 folder(s) there have an invalid module.json, e.g. /p/broken/module.json version: must be a semantic version',
  );
  t.is(mismatch.problem, 'module acme:weather version 2.0.0 is required by modules[1].version, but the plugins folder has 1.2.0 (/p/weather-1.2.0)');
  t.is(fine.problem, undefined);
  t.is(fine.package?.dir, '/p/other-1.0.0');
});
