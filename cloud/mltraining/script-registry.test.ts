import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as createTar, Header } from 'tar';
import { gunzipSync, gzipSync } from 'node:zlib';
import { defaultRegistryLimits, scanPackage, TrainingScriptRegistry } from './script-registry.js';
import { scriptPackage } from './testing/script-package.js';
import { ensureTrainingTables } from './training-tables.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import type { ExecutionContext } from 'ava';

// The registry's rules on the embedded default; the same statements run on PostgreSQL in worker.test.ts.
const [duckdb] = tabularBackends(test);

async function setup(t: ExecutionContext) {
  const root = await mkdtemp(join(tmpdir(), 'registry-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const store: StoreWithBlobs = await duckdb.open(t);
  await ensureTrainingTables(store);
  return { root, store, registry: new TrainingScriptRegistry(store) };
}

/** The script's package unpacked as a run gets it. */
async function packageFolder(registry: TrainingScriptRegistry, script: Awaited<ReturnType<TrainingScriptRegistry['get']>>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'registry-stage-'));
  await registry.stage(script, folder);
  return folder;
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
  t.is(await readFile(join(await packageFolder(registry, found), 'lib', 'util.py'), 'utf8'), 'X = 1\n');
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

/** A tar.gz of `count` empty files (headers only), built in memory; `tail` is appended before gzip. */
function emptyFilesArchive(count: number, tail = Buffer.alloc(1024)): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const block = Buffer.alloc(512);
    new Header({ path: `f/${i}`, mode: 0o644, size: 0, type: 'File', mtime: new Date(0), uid: 0, gid: 0 }).encode(block, 0);
    blocks.push(block);
  }
  return gzipSync(Buffer.concat([...blocks, tail]));
}

test('a package of more entries than the limit is refused from its headers, before anything is unpacked', async (t) => {
  const { registry, store } = await setup(t);
  // 20,000 empty files in a 100 KB upload (the had 200,000 in 1.2 MB and took 204 s to accept).
  const flood = emptyFilesArchive(20_000);
  t.true(flood.length < 200_000);
  const err = await t.throwsAsync(registry.upload(upload(flood, { entrypoint: 'f/0' })));
  t.is(code(err), status.INVALID_ARGUMENT);
  t.regex(err!.message, /more than 10000 entries \(files and folders; PLATFORM_TRAINING_SCRIPT_MAX_FILES\)/);
  t.deepEqual(await registry.list('org'), []);
  // Early: past entry 10,000 the rest is not even read (here it is garbage, which would give another error).
  const early = await t.throwsAsync(scanPackage(emptyFilesArchive(10_001, Buffer.alloc(4096, 0x41)), defaultRegistryLimits));
  t.regex(early!.message, /more than 10000 entries/);
  // The unpacked size is bounded the same way, from the headers.
  const big = await scriptPackage({ 'train.py': 'x'.repeat(5000) });
  const tooBig = await t.throwsAsync(new TrainingScriptRegistry(store, { maxUnpackedBytes: 4096 }).upload(upload(big)));
  t.regex(tooBig!.message, /unpacks to more than 4096 bytes \(PLATFORM_TRAINING_SCRIPT_MAX_UNPACKED_MB\)/);
  t.is((await registry.list('org')).length, 0);
});

test("an organization's scripts are bounded in number and bytes; deleting one frees its share", async (t) => {
  const { store } = await setup(t);
  const registry = new TrainingScriptRegistry(store, { maxScriptsPerOrg: 2, maxBytesPerOrg: 3000 });
  const pkg = await scriptPackage({ 'train.py': 'x'.repeat(1000) });
  await registry.upload(upload(pkg, { version: '1' }));
  await registry.upload(upload(pkg, { version: '2' }));
  const third = await t.throwsAsync(registry.upload(upload(pkg, { version: '3' })));
  t.is(code(third), status.RESOURCE_EXHAUSTED);
  t.regex(third!.message, /already keeps 2 training script versions, the limit \(PLATFORM_TRAINING_SCRIPTS_PER_ORG\)/);
  // Another organization has its own quota.
  await registry.upload(upload(pkg, { organizationId: 'other', version: '1' }));
  await registry.delete('org', 'acme:trainer', '1');
  t.deepEqual(
    (await registry.list('org')).map((s) => s.version),
    ['2'],
  );
  t.is(code(await t.throwsAsync(registry.get('org', 'acme:trainer', '1'))), status.NOT_FOUND);
  t.is(code(await t.throwsAsync(registry.delete('org', 'acme:trainer', '1'))), status.NOT_FOUND);
  t.is(code(await t.throwsAsync(registry.delete('other', 'acme:trainer', '2'))), status.NOT_FOUND);
  await registry.upload(upload(pkg, { version: '3' }));
  // Bytes: 2 x 1000 kept, 1,500 more would pass 3,000.
  await registry.delete('org', 'acme:trainer', '3');
  const large = await scriptPackage({ 'train.py': 'x'.repeat(2500) });
  const bytes = await t.throwsAsync(registry.upload(upload(large, { version: '4' })));
  t.is(code(bytes), status.RESOURCE_EXHAUSTED);
  t.regex(bytes!.message, /more than its 3000-byte quota \(PLATFORM_TRAINING_SCRIPT_BYTES_PER_ORG_MB\)/);
  // Concurrent uploads cannot both slip under the count.
  await registry.delete('org', 'acme:trainer', '2');
  const racing = await Promise.allSettled(['5', '6', '7'].map((version) => registry.upload(upload(pkg, { version }))));
  t.is(racing.filter((r) => r.status === 'fulfilled').length, 2);
});

test('the header scan reads long names (pax), folders and sizes as tar does, and counts every entry', async (t) => {
  const { registry } = await setup(t);
  const deep = `${'very-long-folder-name-'.repeat(6)}/${'and-a-long-file-name-'.repeat(5)}.py`;
  const pkg = await scriptPackage({ 'train.py': 'print(1)\n', [deep]: 'X = 2\n', 'data/weights.bin': 'w'.repeat(3000) });
  const contents = await scanPackage(pkg, defaultRegistryLimits);
  t.is(contents.bytes, 'print(1)\n'.length + 'X = 2\n'.length + 3000);
  t.deepEqual(contents.others, []);
  t.true(contents.entries >= 3);
  const script = await registry.upload(upload(pkg));
  t.is(script.unpackedBytes, contents.bytes);
  t.is(await readFile(join(await packageFolder(registry, await registry.get('org', 'acme:trainer', '1.0.0')), ...deep.split('/')), 'utf8'), 'X = 2\n');
  // An uncompressed tar is read the same way.
  const plain = gunzipSync(pkg);
  t.deepEqual(await scanPackage(plain, defaultRegistryLimits), contents);
});
