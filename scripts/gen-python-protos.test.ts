import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePython } from './gen-python-protos.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const descriptors = join(root, 'gen', 'descriptors.binpb');

test('generates the Python modules with imports rewritten under platform_sdk._gen', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gen-python-'));
  try {
    const out = join(dir, '_gen');
    t.true(generatePython(root, descriptors, out));
    const stub = readFileSync(join(out, 'platform', 'app', 'data', 'v1', 'data_pb2_grpc.py'), 'utf8');
    t.regex(stub, /^from platform_sdk\._gen\.platform\.app\.data\.v1 import data_pb2 /m);
    t.notRegex(stub, /^(from|import) platform\./m); // the standard library's `platform` would shadow it
    for (const pkg of ['', 'platform', 'platform/app/data', 'platform/app/data/v1', 'platform/rpc/v1']) t.true(existsSync(join(out, pkg, '__init__.py')), pkg);
    t.true(existsSync(join(out, 'platform', 'app', 'mltraining', 'v1', 'ml_training_pb2.py')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without protoc on the path it skips with a message that says what to install', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gen-python-'));
  const warn = console.warn;
  const said: string[] = [];
  console.warn = (message: string) => said.push(message);
  try {
    t.false(generatePython(root, descriptors, join(dir, '_gen'), dir));
    t.false(existsSync(join(dir, '_gen')));
    t.regex(said.join('\n'), /skipping the Python client code.*protobuf-compiler protobuf-compiler-grpc/s);
  } finally {
    console.warn = warn;
    rmSync(dir, { recursive: true, force: true });
  }
});
