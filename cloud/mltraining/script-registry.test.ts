import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as createTar } from 'tar';
import { TrainingScriptRegistry } from './script-registry.js';
import { scriptPackage } from './testing/script-package.js';

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const root = await mkdtemp(join(tmpdir(), 'registry-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  return { root, registry: new TrainingScriptRegistry(root) };
}

const upload = (pkg: Uint8Array, over: Record<string, unknown> = {}) => ({
  organizationId: 'org',
  registryItemId: 'acme:trainer',
  version: '1.0.0',
  entrypoint: 'train.py',
  package: pkg,
  ...over,
});

const code = (err: unknown) => (err as { code?: number }).code;

test('an uploaded version is listed, can be fetched and is immutable', async (t) => {
  const { registry } = await setup(t);
  const pkg = await scriptPackage({ 'train.py': 'print(1)\n', 'lib/util.py': 'X = 1\n' });
  const script = await registry.upload(upload(pkg, { modelType: 'OBJECT_DETECTION', description: 'boxes' }));
  t.is(script.packageSizeBytes, pkg.length);
  t.is(script.modelType, 'OBJECT_DETECTION');
  await registry.upload(upload(pkg, { version: '1.1.0' }));
  await registry.upload(upload(pkg, { registryItemId: 'other' }));
  t.deepEqual(
    (await registry.list('org', 'acme:trainer')).map((s) => s.version),
    ['1.0.0', '1.1.0'],
  );
  t.is((await registry.list('org')).length, 3);
  t.is((await registry.list('another-org')).length, 0);
  const found = await registry.get('org', 'acme:trainer', '1.0.0');
  t.is(await readFile(join(found.packageFolder, 'lib', 'util.py'), 'utf8'), 'X = 1\n');
  t.is(code(await t.throwsAsync(registry.upload(upload(pkg)))), status.ALREADY_EXISTS);
  t.is(code(await t.throwsAsync(registry.get('org', 'acme:trainer', '9.9.9'))), status.NOT_FOUND);
  t.is(code(await t.throwsAsync(registry.get('another-org', 'acme:trainer', '1.0.0'))), status.NOT_FOUND);
});

test('bad packages and names are refused with the rule they break', async (t) => {
  const { registry } = await setup(t);
  const pkg = await scriptPackage({ 'train.py': 'print(1)\n' });
  const refused = async (over: Record<string, unknown>, pattern: RegExp) => {
    const err = await t.throwsAsync(registry.upload(upload(pkg, over)));
    t.is(code(err), status.INVALID_ARGUMENT);
    t.regex(err!.message, pattern);
  };
  await refused({ entrypoint: 'missing.py' }, /entrypoint 'missing.py' is not a file in the package/);
  await refused({ entrypoint: '../train.py' }, /relative path inside the package/);
  await refused({ entrypoint: '/etc/passwd' }, /relative path inside the package/);
  await refused({ package: Buffer.from('this is not a tar archive at all, just text') }, /tar or tar.gz/);
  await refused({ package: Buffer.alloc(0) }, /non-empty/);
  await refused({ registryItemId: 'a/b' }, /registry_item_id 'a\/b' must be/);
  await refused({ version: '../1' }, /version '..\/1' must be/);
  t.is((await registry.list('org')).length, 0);
});

test('packages with symbolic links are refused', async (t) => {
  const { registry, root } = await setup(t);
  const src = join(root, 'src');
  await mkdir(src);
  await writeFile(join(src, 'train.py'), 'print(1)\n');
  await symlink('/etc/passwd', join(src, 'secrets'));
  const archive = join(root, 'pkg.tar');
  await createTar({ cwd: src, file: archive }, ['train.py', 'secrets']);
  const err = await t.throwsAsync(registry.upload(upload(await readFile(archive))));
  t.is(code(err), status.INVALID_ARGUMENT);
  t.regex(err!.message, /links found: secrets \(SymbolicLink\)/);
});
