#!/usr/bin/env node
// Generates TypeScript (ts-proto, grpc-js services) and a descriptor set (for gRPC reflection) from proto/,
// and the Python client's messages and stubs (scripts/gen-python-protos.mjs).
// Runs from `npm ci` (prepare) and `npm run gen`. It writes to a fresh folder and swaps it in, so a test
// run reading gen/ never sees a half-written tree.
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePython } from './gen-python-protos.mjs';
import { patchStruct } from './patch-struct.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const buf = join(root, 'node_modules', '.bin', 'buf');
const out = join(root, 'gen');
const next = join(root, `gen.next-${process.pid}`);
const old = join(root, `gen.old-${process.pid}`);

rmSync(next, { recursive: true, force: true });
mkdirSync(next, { recursive: true });
const run = (args) => execFileSync(buf, args, { cwd: join(root, 'proto'), stdio: 'inherit' });
run(['generate', '--output', next]);
patchStruct(join(next, 'google', 'protobuf', 'struct.ts'));
run(['build', '-o', join(next, 'descriptors.binpb')]);
generatePython(root, join(next, 'descriptors.binpb'));
if (existsSync(out)) renameSync(out, old);
renameSync(next, out);
rmSync(old, { recursive: true, force: true });
