// Generates the Python client's message and stub code (cloud/client/python/platform_sdk/_gen, ignored)
// with Debian's protoc 3.21 and grpc_python_plugin: python3-protobuf 3.21 (runtime 4.21) only loads
// code from a compiler of its own generation, which buf's remote plugins are not.
// protoc reads buf's descriptor set rather than proto/ itself, because Debian ships the well-known
// types' .proto files only in libprotobuf-dev; the descriptor set already holds them.
// The generated modules import each other as `platform.app...`, which the standard library's
// `platform` module would shadow, so the imports are rewritten to `platform_sdk._gen.platform...`.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The protos the Python client speaks. */
const files = [
  'platform/rpc/v1/auth.proto',
  'platform/app/data/v1/data.proto',
  'platform/app/datasync/v1/data_sync.proto',
  'platform/app/dataset/v1/dataset.proto',
  'platform/app/mltraining/v1/ml_training.proto',
];

/** The executable `name` on the search path, or undefined. */
export function findTool(name, searchPath = process.env.PATH ?? '') {
  for (const dir of searchPath.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
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

/**
 * Writes the code into `out` (default: the package's _gen folder), swapping it in whole. Returns false,
 * after saying why, when the compiler or the plugin is not on `searchPath`.
 */
export function generatePython(
  root,
  descriptorSet,
  out = join(root, 'cloud', 'client', 'python', 'platform_sdk', '_gen'),
  searchPath = process.env.PATH ?? '',
) {
  const protoc = findTool('protoc', searchPath);
  const plugin = findTool('grpc_python_plugin', searchPath);
  if (!protoc || !plugin) {
    console.warn(
      'gen: skipping the Python client code (cloud/client/python): protoc or grpc_python_plugin is missing; ' +
        'install them with `apt-get install protobuf-compiler protobuf-compiler-grpc`',
    );
    return false;
  }
  const next = `${out}.next-${process.pid}`;
  const old = `${out}.old-${process.pid}`;
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
