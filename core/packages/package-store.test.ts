// Installing ml_model packages: verified, atomic, offline from what is installed, pruned; errors name the
// package and the reason.
import test from 'ava';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packagesSection, referencedPackages, substitutePackages, type PackageEntry } from '../config/package-config.js';
import { PackageSourceError, type PackageRelease, type PackageSource } from './package-source.js';
import { PackageError, PackageStore } from './package-store.js';

/** An in-memory cloud: releases by package and version, the last added is "latest". */
class MemorySource implements PackageSource {
  releases = new Map<string, Map<string, Record<string, Uint8Array>>>();
  online = true;
  /** Served instead of a file's real bytes, to test the checksum. */
  tamper?: Uint8Array;
  add(pkg: string, version: string, files: Record<string, string>): void {
    const versions = this.releases.get(pkg) ?? new Map();
    versions.set(version, Object.fromEntries(Object.entries(files).map(([k, v]) => [k, new TextEncoder().encode(v)])));
    this.releases.set(pkg, versions);
  }
  async resolve(pkg: string, version: string): Promise<PackageRelease> {
    if (!this.online) throw new PackageSourceError('unreachable', 'connect ECONNREFUSED');
    const versions = this.releases.get(pkg);
    if (!versions) throw new PackageSourceError('not-found', `no package ${pkg}`);
    const v = version === 'latest' ? [...versions.keys()].at(-1)! : version;
    const files = versions.get(v);
    if (!files) throw new PackageSourceError('not-found', `no version ${version} (versions: ${[...versions.keys()].join(', ')})`);
    return {
      version: v,
      files: Object.entries(files).map(([name, bytes]) => ({ name, size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') })),
    };
  }
  async *download(pkg: string, version: string, file: string): AsyncIterable<Uint8Array> {
    const bytes = this.releases.get(pkg)!.get(version)![file];
    yield this.tamper ?? bytes.subarray(0, 3);
    if (!this.tamper) yield bytes.subarray(3);
  }
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const root = await mkdtemp(join(tmpdir(), 'packages-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const source = new MemorySource();
  source.add('org1/shapes', 'v1', { 'model.onnx': 'onnx-v1', 'labels.txt': 'red\nblue\n' });
  return { root, source, store: new PackageStore(root) };
}

const entry = (version = 'latest'): PackageEntry => ({ name: 'shapes', package: 'org1/shapes', version, type: 'ml_model' });

test('a release is downloaded, checked and installed under <root>/<org>/<model>/<version>', async (t) => {
  const { root, source, store } = await setup(t);
  const installed = await store.install(entry('v1'), source);
  t.is(installed.folder, join(root, 'org1', 'shapes', 'v1'));
  t.is(await readFile(join(installed.folder, 'model.onnx'), 'utf8'), 'onnx-v1');
  t.is(await readFile(join(installed.folder, 'labels.txt'), 'utf8'), 'red\nblue\n');
  t.deepEqual(await readdir(join(root, 'org1', 'shapes')), ['v1'], 'no temporary folder is left');
});

test('"latest" follows new versions; the old one stays until pruned; offline uses what is installed', async (t) => {
  const { source, store } = await setup(t);
  const first = await store.install(entry(), source);
  t.is(first.version, 'v1');
  source.add('org1/shapes', 'v2', { 'model.onnx': 'onnx-v2' });
  const second = await store.install(entry(), source);
  t.is(second.version, 'v2');
  t.true(existsSync(first.folder), 'the running version is still there until the new one is in use');
  t.deepEqual(await store.prune([second]), [first.folder]);
  t.false(existsSync(first.folder));
  source.online = false;
  const offline = await store.install(entry(), source);
  t.is(offline.version, 'v2');
  const pinned = (await t.throwsAsync(store.install(entry('v1'), source))) as PackageError;
  t.is(pinned.errorCode, 'CORE_ERR_PACKAGE');
  t.is(pinned.reason, 'offline');
  t.regex(pinned.message, /^package shapes \(org1\/shapes@v1\): not installed and cannot be downloaded \(connect ECONNREFUSED\)/);
});

test('a checksum mismatch installs nothing and keeps the installed version', async (t) => {
  const { root, source, store } = await setup(t);
  await store.install(entry('v1'), source);
  source.add('org1/shapes', 'v2', { 'model.onnx': 'onnx-v2' });
  source.tamper = new TextEncoder().encode('evil');
  const err = (await t.throwsAsync(store.install(entry('v2'), source))) as PackageError;
  t.is(err.errorCode, 'CORE_ERR_PACKAGE');
  t.is(err.reason, 'checksum');
  t.regex(err.message, /^package shapes \(org1\/shapes@v2\): model\.onnx has sha256 [0-9a-f]{64} \(4 bytes\); the release says [0-9a-f]{64} \(7 bytes\)/);
  t.deepEqual(await readdir(join(root, 'org1', 'shapes')), ['v1']);
});

test('unknown packages and versions are named', async (t) => {
  const { source, store } = await setup(t);
  const pkg = (await t.throwsAsync(store.install({ ...entry('v1'), package: 'org1/nope' }, source))) as PackageError;
  t.is(pkg.errorCode, 'CORE_ERR_PACKAGE');
  t.is(pkg.reason, 'not-found');
  t.is(pkg.message, 'package shapes (org1/nope@v1): no package org1/nope');
  const version = (await t.throwsAsync(store.install(entry('v9'), source))) as PackageError;
  t.is(version.message, 'package shapes (org1/shapes@v9): no version v9 (versions: v1)');
});

test('a disk error names the package and the folder', async (t) => {
  const { root, source } = await setup(t);
  // A root that is a file: every folder under it fails (ENOTDIR), as a full or read-only disk would.
  const blocked = join(root, 'file');
  await writeFile(blocked, 'x');
  const store = new PackageStore(blocked);
  const err = (await t.throwsAsync(store.install(entry('v1'), source))) as PackageError;
  t.is(err.errorCode, 'CORE_ERR_PACKAGE');
  t.is(err.reason, 'disk');
  t.regex(err.message, /^package shapes \(org1\/shapes@v1\): cannot be installed in .*\/file: .*ENOTDIR/);
});

test('config: entries are checked, and ${packages.NAME} is replaced in attributes', (t) => {
  const parsed = packagesSection.safeParse([
    { name: 'shapes', package: 'org1/shapes', type: 'ml_model' },
    { name: 'shapes', package: 'bad', type: 'docker' },
  ]);
  t.false(parsed.success);
  const messages = parsed.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  t.true(messages.includes('1.package: must be <organization id>/<model name>'), messages.join('; '));
  t.true(messages.includes('1.type: must be "ml_model"'), messages.join('; '));
  t.is(packagesSection.parse([{ name: 'shapes', package: 'org1/shapes', type: 'ml_model' }])[0].version, 'latest');
  const attributes = { model_path: '${packages.shapes}/model.onnx', nested: ['${packages.shapes}/labels.txt'], n: 3 };
  t.deepEqual([...referencedPackages(attributes)], ['shapes']);
  t.deepEqual(substitutePackages(attributes, { shapes: '/p/org1/shapes/v2' }), {
    model_path: '/p/org1/shapes/v2/model.onnx',
    nested: ['/p/org1/shapes/v2/labels.txt'],
    n: 3,
  });
  t.throws(() => substitutePackages(attributes, {}), { message: 'attributes.model_path: ${packages.shapes} names no installed package (installed: none)' });
});
