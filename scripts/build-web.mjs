#!/usr/bin/env node
// Bundles the web pages (web/<page>/) into dist/web/<page>/ with esbuild: one minified ES module per
// page (plus chunks for views it loads on demand) and its index.html and style.css. Everything the page loads is served by the program itself;
// nothing comes from a CDN. @grpc/grpc-js, which the generated protos import for Node's client classes,
// is replaced by a stub: the page calls through its own gRPC-Web client; Buffer by Uint8Array.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * Writes `contents` to `path` only when they differ from the file's, through a temporary file renamed over
 * it. Every browser test file rebuilds the pages while the programs of other test files serve them from
 * here: a file written in place is empty, or missing, for a moment, and a page loaded then got an empty
 * app.js or no index.html and never came up. A rename replaces the file whole; an unchanged file is left alone.
 */
function writeIfChanged(path, contents) {
  let old;
  try {
    old = readFileSync(path);
  } catch {
    old = undefined;
  }
  if (old !== undefined && Buffer.compare(old, contents) === 0) return;
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, contents);
  renameSync(temp, path);
}

const pages = [
  { name: 'runtime', entry: 'main.tsx' },
  { name: 'cloud', entry: 'main.tsx' },
];

for (const page of pages) {
  const from = join(root, 'web', page.name);
  const to = join(root, 'dist', 'web', page.name);
  const { outputFiles } = await build({
    entryPoints: [join(from, page.entry)],
    // ESM with splitting: views loaded with import() become chunks of their own (chunks/), so the first
    // view's JavaScript stays small; app.js is the entry.
    outdir: to,
    entryNames: 'app',
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    alias: { '@grpc/grpc-js': join(root, 'web', 'shared', 'grpc-shim.ts') },
    // The generated protos build `bytes` fields with Node's Buffer; the page gets Uint8Arrays.
    inject: [join(root, 'web', 'shared', 'buffer-shim.ts')],
    tsconfig: join(root, 'web', 'tsconfig.json'),
    logLevel: 'warning',
    // Written below, each file only if it changed, and whole.
    write: false,
  });
  for (const file of outputFiles) writeIfChanged(file.path, file.contents);
  for (const file of ['index.html', 'style.css']) writeIfChanged(join(to, file), readFileSync(join(from, file)));
  // One icon for both pages (without it every browser asks for /favicon.ico and gets a 404).
  writeIfChanged(join(to, 'favicon.svg'), readFileSync(join(root, 'web', 'shared', 'favicon.svg')));
}
