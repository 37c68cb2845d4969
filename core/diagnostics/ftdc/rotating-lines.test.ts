import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RotatingLines } from './rotating-lines.js';

const options = (dir: string) => ({ dir, prefix: 'ftdc-', maxFileBytes: 200, maxFiles: 3, syncEveryLines: 2 });
const lines = (dir: string) =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean));

test('files rotate at the size limit, at most maxFiles are kept, and the newest lines survive in order', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-rotate-'));
  const other = join(dir, 'notes.txt');
  writeFileSync(other, 'not ours');
  const file = new RotatingLines(options(dir));
  file.open();
  for (let i = 0; i < 100; i++) file.append({ i, pad: 'x'.repeat(30) });
  file.close();
  const ours = readdirSync(dir).filter((n) => n.startsWith('ftdc-'));
  t.is(ours.length, 3);
  t.true(
    ours.every((n) => /^ftdc-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-\d+-\d{6}\.jsonl$/.test(n)),
    ours.join(),
  );
  for (const name of ours) t.true(readFileSync(join(dir, name)).length <= 200, name);
  const kept = lines(join(dir))
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { i: number }).i);
  t.is(kept.at(-1), 99);
  t.deepEqual(
    kept,
    [...kept].sort((a, b) => a - b),
  );
  t.is(readFileSync(other, 'utf8'), 'not ours', 'files that are not capture files are left alone');
});

test('a restart keeps counting the files of earlier runs toward the limit', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-rotate-'));
  for (let run = 0; run < 5; run++) {
    const file = new RotatingLines(options(dir));
    file.open();
    file.append({ run });
    file.close();
  }
  t.is(readdirSync(dir).length, 3);
  t.deepEqual(
    lines(dir).map((l) => (JSON.parse(l) as { run: number }).run),
    [2, 3, 4],
  );
});

test('a folder that cannot be created is an error at open', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-rotate-'));
  writeFileSync(join(dir, 'file'), '');
  t.throws(() => new RotatingLines(options(join(dir, 'file', 'sub'))).open(), { code: 'ENOTDIR' });
});

test("rotation prunes only this process's files and those of ended processes, never another live process's", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ftdc-rotate-'));
  // Another live process sharing the folder (the test runner's parent), with more files than the limit.
  const other = process.ppid;
  const theirs = Array.from({ length: 5 }, (_, i) => `ftdc-2020-01-01T00-00-0${i}.000Z-${other}-00000${i}.jsonl`);
  for (const name of theirs) writeFileSync(join(dir, name), '{"theirs":true}\n');
  // A process that has ended (pid 2^22 + 1 is above Linux's pid_max), with more files than the limit.
  const ended = Array.from({ length: 5 }, (_, i) => `ftdc-2020-01-01T00-00-0${i}.000Z-4194305-00000${i}.jsonl`);
  for (const name of ended) writeFileSync(join(dir, name), '{"ended":true}\n');
  const file = new RotatingLines(options(dir));
  file.open();
  for (let i = 0; i < 100; i++) file.append({ i, pad: 'x'.repeat(30) });
  file.close();
  const names = readdirSync(dir);
  t.deepEqual(names.filter((n) => n.includes(`-${other}-`)).sort(), theirs);
  t.deepEqual(names.filter((n) => n.includes('-4194305-')).sort(), ended.slice(2));
  t.is(names.filter((n) => n.includes(`-${process.pid}-`)).length, 3);
});
