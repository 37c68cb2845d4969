// MachinePackages' update rule: a machine running a version of a package keeps it when the new version
// cannot be installed, and only a package with nothing running makes its resources fail.
import test from 'ava';
import { parseMachineConfig } from '../shared/machine-config.js';
import { parseResourceEntries } from '../shared/resource-entry.js';
import { MachinePackages } from './machine-packages.js';
import { PackageError, type InstalledPackage, type PackageStore } from './package-store.js';

const config = (version: string) =>
  parseMachineConfig({
    packages: [{ name: 'shapes', package: 'org1/shapes', version, type: 'ml_model' }],
    services: [{ name: 'm', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: '${packages.shapes}/model.onnx' } }],
  });

/** A store whose versions install or fail as listed; `v9` is a release whose file fails its checksum. */
function store(): PackageStore {
  return {
    async install(entry: { name: string; package: string; version: string }): Promise<InstalledPackage> {
      if (entry.version === 'v9')
        throw new PackageError(entry.name, 'checksum', `package ${entry.name} (${entry.package}@v9): model.onnx has the wrong sha256`);
      return { name: entry.name, package: entry.package, version: entry.version, folder: `/packages/${entry.package}/${entry.version}` };
    },
    async prune() {
      return [];
    },
  } as unknown as PackageStore;
}

const quiet = { info: () => undefined, error: () => undefined };
const prepared = (packages: MachinePackages, version: string) => {
  const entries = parseResourceEntries(config(version).components, config(version).services);
  packages.prepare(entries);
  return entries[0];
};

test('a new version that cannot be installed leaves the running version in place, and says so in the log', async (t) => {
  const errors: string[] = [];
  const packages = new MachinePackages(store(), { info: () => undefined, error: (message, fields) => errors.push(`${message} ${JSON.stringify(fields)}`) });
  await packages.install(config('v1'));
  t.is(prepared(packages, 'v1').attributes.model_path, '/packages/org1/shapes/v1/model.onnx');
  t.false(await packages.install(config('v9')), 'nothing changed for the resources');
  const entry = prepared(packages, 'v9');
  t.is(entry.error, undefined);
  t.is(entry.attributes.model_path, '/packages/org1/shapes/v1/model.onnx');
  t.regex(errors.join('\n'), /package update not installed; the running version stays .*"running":"v1".*wrong sha256/);
});

test('with no version running, the package error is the resource error, naming the package and the reason', async (t) => {
  const packages = new MachinePackages(store(), quiet);
  await packages.install(config('v9'));
  t.regex(prepared(packages, 'v9').error?.message ?? '', /services\[0\]\.attributes.*package shapes \(org1\/shapes@v9\): model.onnx has the wrong sha256/);
});
