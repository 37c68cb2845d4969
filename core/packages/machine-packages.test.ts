// MachinePackages' update rules: a machine running a version of a package keeps it when the new version
// cannot be installed, only a package with nothing running makes its resources fail, and only a config
// that follows "latest" (or waits for an unreachable cloud) is checked again.
import test from 'ava';
import { parseMachineConfig } from '../config/machine-config.js';
import { parseResourceEntries } from '../config/resource-entry.js';
import { MachinePackages } from './machine-packages.js';
import { PackageError, type InstalledPackage, type PackageStore } from './package-store.js';

const config = (version: string) =>
  parseMachineConfig({
    packages: [{ name: 'shapes', package: 'org1/shapes', version, type: 'ml_model' }],
    services: [{ name: 'm', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: '${packages.shapes}/model.onnx' } }],
  });

/** A store whose versions install or fail as listed: `v9` is a release whose file fails its checksum, `v5` is not installed and the cloud cannot be reached. */
function store(): PackageStore {
  return {
    async install(entry: { name: string; package: string; version: string }): Promise<InstalledPackage> {
      if (entry.version === 'v9')
        throw new PackageError(entry.name, 'checksum', `package ${entry.name} (${entry.package}@v9): model.onnx has the wrong sha256`);
      if (entry.version === 'v5')
        throw new PackageError(entry.name, 'offline', `package ${entry.name} (${entry.package}@v5): not installed and cannot be downloaded`);
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

const intervals = { retryMs: 10_000, latestMs: 60_000 };
const listing = (...versions: (string | undefined)[]) =>
  parseMachineConfig({ packages: versions.map((version, i) => ({ name: `p${i}`, package: `org1/p${i}`, version, type: 'ml_model' })) });

test('a config of pinned versions that all installed is never checked again; one that follows "latest" is, at the latest interval', async (t) => {
  const packages = new MachinePackages(store(), quiet);
  await packages.install(listing('v1', 'v2'));
  t.is(packages.nextCheckMs(intervals), undefined, 'pinned versions never change');
  await packages.install(listing());
  t.is(packages.nextCheckMs(intervals), undefined, 'no packages');
  await packages.install(listing('v1', 'latest'));
  t.is(packages.nextCheckMs(intervals), 60_000);
  await packages.install(listing(undefined));
  t.is(packages.nextCheckMs(intervals), 60_000, 'a version left out means "latest"');
  await packages.install(listing('v1'));
  t.is(packages.nextCheckMs(intervals), undefined, 'pinning the version again ends the checks');
});

test('a package missing because the cloud was unreachable is retried; with "latest" too, the sooner interval wins', async (t) => {
  const packages = new MachinePackages(store(), quiet);
  await packages.install(listing('v5'));
  t.is(packages.nextCheckMs(intervals), 10_000);
  await packages.install(listing('v5', 'latest'));
  t.is(packages.nextCheckMs(intervals), 10_000);
  t.is(packages.nextCheckMs({ retryMs: 10_000, latestMs: 2_000 }), 2_000);
  await packages.install(listing('v1', 'v9'));
  t.is(packages.nextCheckMs(intervals), undefined, 'a version the cloud refused is not retried until the config changes');
});
