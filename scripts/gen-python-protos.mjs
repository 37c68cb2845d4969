// Generates the Python client's message and stub code (cloud/client/python/platform_sdk/_gen, ignored)
// with Debian's protoc 3.21 and grpc_python_plugin: python3-protobuf 3.21 (runtime 4.21) only loads
// code from a compiler of its own generation, which buf's remote plugins are not.
// protoc reads buf's descriptor set rather than proto/ itself, because Debian ships the well-known
// types' .proto files only in libprotobuf-dev; the descriptor set already holds them.
// The generated modules import each other as `platform.app...`, which the standard library's
// `platform` module would shadow, so the imports are rewritten to `platform_sdk._gen.platform...`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The protos the Python client speaks. */
const files = [
  'platform/rpc/v1/auth.proto',
  'platform/app/data/v1/data.proto',
  'platform/app/datasync/v1/data_sync.proto',
  'platform/app/dataset/v1/dataset.proto',
  'platform/app/mltraining/v1/ml_training.proto',
];

function findTool(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function rewriteImports(dir) {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) {
      rewriteImports(full);
      continue;
    }
    if (!entry.endsWith('.py')) continue;
    const text = readFileSync(full, 'utf8');
    writeFileSync(full, text.replace(/^(from|import) platform\./gm, '$1 platform_sdk._gen.platform.'));
  }
  // Regular packages, so that setuptools' package discovery and plain imports both find them.
  writeFileSync(join(dir, '__init__.py'), '');
}

export function generatePython(root, descriptorSet) {
  const protoc = findTool('protoc');
  const plugin = findTool('grpc_python_plugin');
  if (!protoc || !plugin) {
    console.warn(
      'gen: skipping the Python client code (cloud/client/python): protoc or grpc_python_plugin is missing; ' +
        'install them with `apt-get install protobuf-compiler protobuf-compiler-grpc`',
    );
    return false;
  }
  const pkg = join(root, 'cloud', 'client', 'python', 'platform_sdk');
  const out = join(pkg, '_gen');
  const next = join(pkg, `_gen.next-${process.pid}`);
  const old = join(pkg, `_gen.old-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  execFileSync(
    protoc,
    [`--descriptor_set_in=${descriptorSet}`, `--python_out=${next}`, `--grpc_python_out=${next}`, `--plugin=protoc-gen-grpc_python=${plugin}`, ...files],
    { stdio: 'inherit' },
  );
  rewriteImports(next);
  if (existsSync(out)) renameSync(out, old);
  renameSync(next, out);
  rmSync(old, { recursive: true, force: true });
  return true;
}
