#!/usr/bin/env node
// Transpiles the TypeScript sources (and the generated protos) to dist/ with esbuild, file by file.
// Programs and their driver workers run from dist/: a worker thread that had to load the tsx loader
// would take ~100 ms to start instead of ~18 ms, and the runtime starts one worker per resource.
// Type checking is `npm run typecheck`; this step only strips types.
//
// What runs inside a driver's worker is also bundled into single CommonJS files: the worker host
// (driver-host.cjs) and each built-in driver (driver.bundle.cjs beside driver.js, which the host
// prefers). A worker that loads only CommonJS never starts the ES module loader: 100 workers that
// each construct the fake sensor took 34 instead of 42 ms of CPU apiece (2 cores), and
// platform-server with 100 resources serves in 2.4 instead of 2.7 s.
import { build } from 'esbuild';
import { cpSync, readdirSync, rmSync, statSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sourceDirs = ['core', 'plugins', 'drivers', 'cloud', 'scripts', 'gen'];
const out = join(root, 'dist');

/** Walks a folder, returning TypeScript entry points and the other files that travel with them. */
function walk(dir, found = { ts: [], assets: [] }) {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    if (statSync(full).isDirectory()) walk(full, found);
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) found.ts.push(full);
    else found.assets.push(full);
  }
  return found;
}

rmSync(out, { recursive: true, force: true });
const files = { ts: [], assets: [] };
for (const dir of sourceDirs) {
  try {
    walk(join(root, dir), files);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
}
await build({
  entryPoints: files.ts,
  outdir: out,
  outbase: root,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: join(root, 'tsconfig.json'),
  sourcemap: 'linked',
  logLevel: 'warning',
});
const workerBundle = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  tsconfig: join(root, 'tsconfig.json'),
  sourcemap: 'linked',
  logLevel: 'warning',
};
// Piscina is the host's only package, and it is loaded lazily (for transfers) from node_modules.
await build({
  ...workerBundle,
  entryPoints: [join(root, 'core/workers/driver-host.ts')],
  outfile: join(out, 'core/workers/driver-host.cjs'),
  external: ['piscina'],
});
await build({ ...workerBundle, entryPoints: [join(root, 'scripts/bench/empty-worker.ts')], outfile: join(out, 'scripts/bench/empty-worker.cjs') });
// The data manager (core/datamanager) is a built-in service whose driver runs in a worker like the others.
const drivers = files.ts.filter(
  (f) => (relative(root, f).startsWith('drivers') && f.endsWith('/driver.ts')) || relative(root, f) === join('core', 'datamanager', 'driver.ts'),
);
await build({
  ...workerBundle,
  entryPoints: drivers.map((f) => ({ in: f, out: relative(root, f).slice(0, -'.ts'.length) + '.bundle' })),
  outdir: out,
  outExtension: { '.js': '.cjs' },
  // Loaded from node_modules by the drivers that use them, not bundled into each: @grpc/grpc-js (the data
  // manager's sync), and onnxruntime-web, which finds its WASM beside its own files in node_modules.
  // OpenTelemetry (the data manager's tracing) is loaded only when tracing is on, never bundled.
  external: ['@grpc/grpc-js', 'onnxruntime-web', '@opentelemetry/*'],
});

for (const asset of files.assets) {
  const target = join(out, relative(root, asset));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(asset, target);
}
await import('./build-web.mjs');
// platform-micro-server ships as one bundled file (scripts/build-micro.mjs, core/micro/README.md).
const { buildMicro } = await import('./build-micro.mjs');
await buildMicro(join(out, 'platform-micro-server.mjs'));
