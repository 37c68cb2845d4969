// The zip safety rules, on zips built byte by byte: each bad zip is refused naming the file and the
// reason, before anything is written, and nothing lands outside the folder.
import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as zlibCrc32, deflateRawSync } from 'node:zlib';
import { extractZip, openCheckedZip, ZipRefusedError } from './safe-zip.js';
import { rawZip, zeroBomb } from './testing/raw-zip.js';
import { crc32, tableCrc32, writeZip } from './zip-writer.js';
import { noisyPng } from '../web/testing-images.js';

let dir: string;
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'safe-zip-'));
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function zipFile(bytes: Buffer): string {
  const path = join(dir, `z${++n}.zip`);
  writeFileSync(path, bytes);
  return path;
}

async function refused(t: import('ava').ExecutionContext, bytes: Buffer, file: string, reason: RegExp) {
  const out = join(dir, `out${++n}`);
  const err = await t.throwsAsync(extractZip(zipFile(bytes), out));
  t.true(err instanceof ZipRefusedError, String(err));
  t.is((err as ZipRefusedError).errorCode, 'CLOUD_ERR_ZIP_REFUSED');
  t.is((err as ZipRefusedError).file, file);
  t.regex((err as ZipRefusedError).reason, reason);
  t.false(existsSync(out) && readdirSync(out, { recursive: true }).length > 0, 'nothing is extracted');
  return err as ZipRefusedError;
}

test('a plain zip extracts inside its folder', async (t) => {
  const out = join(dir, 'plain');
  const files = await extractZip(
    zipFile(
      rawZip([
        { name: 'a/b.txt', data: Buffer.from('hello'), deflate: true },
        { name: 'c.bin', data: Buffer.from([1, 2]) },
      ]),
    ),
    out,
  );
  t.deepEqual(files, ['a/b.txt', 'c.bin']);
  t.is(readFileSync(join(out, 'a/b.txt'), 'utf8'), 'hello');
});

test('../ paths and absolute paths are refused, and nothing is written outside', async (t) => {
  await refused(
    t,
    rawZip([
      { name: 'ok.txt', data: Buffer.from('x') },
      { name: '../escape.txt', data: Buffer.from('x') },
    ]),
    '../escape.txt',
    /\.\.\/ path segment/,
  );
  await refused(t, rawZip([{ name: 'a/../../escape2.txt', data: Buffer.from('x') }]), 'a/../../escape2.txt', /\.\.\/ path segment/);
  await refused(t, rawZip([{ name: '/etc/escape3.txt', data: Buffer.from('x') }]), '/etc/escape3.txt', /absolute path/);
  for (const name of ['escape.txt', 'escape2.txt']) t.false(existsSync(join(dir, name)));
});

test('symbolic links are refused; an existing link in the folder is never written through', async (t) => {
  await refused(t, rawZip([{ name: 'link', data: Buffer.from('/etc/passwd'), mode: 0o120777 }]), 'link', /symbolic link/);
  // A folder that already holds a link pointing out of it.
  const out = join(dir, 'with-link');
  const target = join(dir, 'outside-target');
  mkdirSync(out);
  symlinkSync(dir, join(out, 'sub'));
  const err = await t.throwsAsync(extractZip(zipFile(rawZip([{ name: 'sub/outside-target', data: Buffer.from('x') }])), out));
  t.regex(String(err), /sub\/outside-target: goes through a symbolic link/);
  t.false(existsSync(target));
});

test('a 2 GiB zip bomb is refused from its declared size, before any byte is inflated', async (t) => {
  const bomb = zeroBomb(2);
  t.true(bomb.compressed.length < 4 * 2 ** 20, `the bomb is ${bomb.compressed.length} bytes`);
  const err = await refused(
    t,
    rawZip([{ name: 'zeros.bin', raw: bomb }]),
    'zeros.bin',
    /expands to 2147483648 bytes, more than the limit of 268435456 per file \(zip bomb\?\)/,
  );
  t.truthy(err);
  // Under the per-file limit but many times smaller than it claims: the ratio rule.
  const small = deflateRawSync(Buffer.alloc(8 * 2 ** 20));
  await refused(t, rawZip([{ name: 'ratio.bin', raw: { compressed: small, size: 8 * 2 ** 20, crc: 0 } }]), 'ratio.bin', /expands \d+ times, more than 200/);
  // Many files that add up past the total.
  const entries = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, raw: { compressed: small, size: 8 * 2 ** 20, crc: 0 } }));
  const total = await t.throwsAsync(
    openCheckedZip(zipFile(rawZip(entries)), { maxEntries: 10, maxTotalBytes: 30 * 2 ** 20, maxEntryBytes: 2 ** 30, maxRatio: 1e9 }),
  );
  t.regex(String(total), /expands to more than 31457280 bytes \(at f3\)/);
});

test('an entry whose header understates its size is refused when it inflates past it', async (t) => {
  const liar = rawZip([{ name: 'liar.bin', data: Buffer.alloc(100_000), deflate: true, declaredSize: 1000 }]);
  const err = await refused(t, liar, 'liar.bin', /cannot be extracted .*too many bytes/);
  t.truthy(err);
});

test('not a zip, duplicates and too many entries are refused by name', async (t) => {
  await refused(t, Buffer.from('this is not a zip file at all, not even close'), 'the zip', /not a readable zip/);
  await refused(
    t,
    rawZip([
      { name: 'twice', data: Buffer.from('1') },
      { name: 'twice', data: Buffer.from('2') },
    ]),
    'twice',
    /appears twice/,
  );
  const many = rawZip(Array.from({ length: 3 }, (_, i) => ({ name: `e${i}`, data: Buffer.from('x') })));
  const err = await t.throwsAsync(openCheckedZip(zipFile(many), { maxEntries: 2, maxTotalBytes: 1e9, maxEntryBytes: 1e9, maxRatio: 200 }));
  t.regex(String(err), /has 3 entries, more than the limit of 2/);
});

test('the export zip writer: stored and deflated entries read back with their CRCs, with and without ZIP64 records', async (t) => {
  const entries = [
    { path: 'labels.txt', data: Buffer.from('car\nperson\n'), compress: true },
    { path: 'images/a.png', data: Buffer.from(noisyPng(30, 20)), compress: false },
    { path: 'nested/ü.json', data: Buffer.from(JSON.stringify({ a: 'x'.repeat(5000) })), compress: true },
  ];
  for (const forceZip64 of [false, true]) {
    const chunks: Buffer[] = [];
    for await (const piece of writeZip(entries, { forceZip64 })) chunks.push(piece);
    const bytes = Buffer.concat(chunks);
    const zip = await openCheckedZip(zipFile(bytes));
    try {
      t.deepEqual(
        zip.files.map((e) => e.fileName),
        entries.map((e) => e.path),
      );
      for (const [i, entry] of zip.files.entries()) {
        const content = await zip.read(entry);
        t.deepEqual(content, entries[i].data);
        t.is(entry.crc32, crc32(content));
        t.is(entry.crc32, tableCrc32(content));
        t.is(entry.crc32, zlibCrc32(content));
      }
    } finally {
      zip.close();
    }
    // The same entries, the same bytes.
    const again: Buffer[] = [];
    for await (const piece of writeZip(entries, { forceZip64 })) again.push(piece);
    t.true(Buffer.concat(again).equals(bytes));
  }
});
