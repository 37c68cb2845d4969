#!/usr/bin/env node
// Bundles the web pages (web/<page>/) into dist/web/<page>/ with esbuild: one minified ES module per
// page (plus chunks for views it loads on demand) and its index.html and style.css. Everything the page loads is served by the program itself;
// nothing comes from a CDN. @grpc/grpc-js, which the generated protos import for Node's client classes,
// is replaced by a stub: the page calls through its own gRPC-Web client; Buffer by Uint8Array.
import { build } from 'esbuild';
import { cpSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pages = [
  { name: 'runtime', entry: 'main.tsx' },
  { name: 'cloud', entry: 'main.tsx' },
];

for (const page of pages) {
  const from = join(root, 'web', page.name);
  const to = join(root, 'dist', 'web', page.name);
  mkdirSync(to, { recursive: true });
  await build({
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
  });
  for (const file of ['index.html', 'style.css']) cpSync(join(from, file), join(to, file));
  // One icon for both pages (without it every browser asks for /favicon.ico and gets a 404).
  cpSync(join(root, 'web', 'shared', 'favicon.svg'), join(to, 'favicon.svg'));
}
