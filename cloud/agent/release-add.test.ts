// `platform-cloud agent release add --sha256` (issue 29): a digest that does not match the file it names
// is refused when the file can be read from here (--file, file:// and http:// URLs), naming both digests;
// a file that cannot be read from here is accepted as given, with a warning. The real command, run on a
// data dir directly (no server).
import test from 'ava';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';

const cloudMain = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const run = promisify(execFile);
const bytes = Buffer.from('#!/bin/sh\necho platform-server 1.0.0\n');
const right = createHash('sha256').update(bytes).digest('hex');
const wrong = createHash('sha256').update('other bytes').digest('hex');

let dataDir: string;
let binary: string;
let server: Server;
let served: string;

test.before(async () => {
  dataDir = tempDataDir();
  binary = join(dataDir, 'platform-server-1.0.0');
  writeFileSync(binary, bytes);
  server = createServer((req, res) => (req.url === '/ps' ? res.end(bytes) : res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  served = `http://127.0.0.1:${(server.address() as { port: number }).port}/ps`;
});
test.after.always(async () => {
  await new Promise((resolve) => server?.close(resolve));
  removeDataDir(dataDir);
});

const add = (version: string, source: string[], sha256: string) =>
  run(process.execPath, [
    '--import',
    'tsx',
    cloudMain,
    'agent',
    'release',
    'add',
    '--subsystem',
    'platform-server',
    '--version',
    version,
    ...source,
    '--sha256',
    sha256,
    '--data-dir',
    dataDir,
    '--json',
  ]);

const releases = async () =>
  (
    JSON.parse((await run(process.execPath, ['--import', 'tsx', cloudMain, 'agent', 'release', 'list', '--data-dir', dataDir, '--json'])).stdout) as {
      releases: { version: string; sha256: string }[];
    }
  ).releases;

test.serial('a --sha256 that does not match the file (--file, file:// or http://) is refused, naming both digests; nothing is added', async (t) => {
  for (const [version, source] of [
    ['1.0.1', ['--file', binary]],
    ['1.0.2', ['--url', pathToFileURL(binary).href]],
    ['1.0.3', ['--url', served]],
  ] as const) {
    const refused = await t.throwsAsync(add(version, [...source], wrong));
    const stderr = String((refused as { stderr?: string }).stderr);
    t.regex(stderr, new RegExp(`--sha256 ${wrong} does not match .*, whose sha256 is ${right}`), version);
  }
  t.deepEqual(await releases(), []);
});

test.serial('a matching --sha256 is accepted; one for a file that cannot be read from here is accepted with a warning', async (t) => {
  const ok = await add('1.1.0', ['--url', served], right.toUpperCase());
  t.is((JSON.parse(ok.stdout) as { sha256: string }).sha256, right);
  t.is(ok.stderr, '');
  // Nothing listens on port 1: the file cannot be read from here, so the digest is taken as given.
  const unchecked = await add('1.2.0', ['--url', 'http://127.0.0.1:1/ps'], wrong);
  t.regex(unchecked.stderr, /warning: --sha256 not checked: http:\/\/127\.0\.0\.1:1\/ps cannot be read from here/);
  const missing = await add('1.3.0', ['--url', 'file:///opt/only-on-the-machines/platform-server'], wrong);
  t.regex(missing.stderr, /warning: --sha256 not checked: file:\/\/\/opt\/only-on-the-machines\/platform-server cannot be read from here \(ENOENT/);
  t.deepEqual((await releases()).map((r) => [r.version, r.sha256]).sort(), [
    ['1.1.0', right],
    ['1.2.0', wrong],
    ['1.3.0', wrong],
  ]);
});
