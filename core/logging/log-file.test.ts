import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usage } from '../server/flags.js';
import { LOG_FILE_BYTES, LOG_FILES, RotatingLogFile, siblingPath } from './log-file.js';

const write = (file: RotatingLogFile, line: string) => new Promise<void>((resolve, reject) => file.write(line, (err) => (err ? reject(err) : resolve())));
const end = (file: RotatingLogFile) => new Promise<void>((resolve) => file.end(resolve));

test('siblings are numbered before the extension', (t) => {
  t.is(siblingPath('/l/runtime.log', 1), '/l/runtime.1.log');
  t.is(siblingPath('/l/runtime', 3), '/l/runtime.3');
});

test('lines go to the named file, which rotates to numbered siblings within the size limit, oldest deleted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-logfile-'));
  const path = join(dir, 'sub', 'X.log');
  const file = new RotatingLogFile(path, 1000, 3);
  for (let i = 0; i < 100; i++) await write(file, `${JSON.stringify({ i, pad: 'x'.repeat(40) })}\n`);
  await end(file);
  t.deepEqual(readdirSync(join(dir, 'sub')).sort(), ['X.1.log', 'X.2.log', 'X.log']);
  for (const name of ['X.log', 'X.1.log', 'X.2.log']) t.true(statSync(join(dir, 'sub', name)).size <= 1000, name);
  const index = (name: string) =>
    readFileSync(join(dir, 'sub', name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
  t.is(index('X.log').at(-1), 99);
  // Newest in X.log, older in X.1.log, oldest kept in X.2.log, with no gap between them.
  t.is(index('X.1.log').at(-1)! + 1, index('X.log')[0]);
  t.is(index('X.2.log').at(-1)! + 1, index('X.1.log')[0]);
});

test('a restart appends to the named file and keeps counting its size', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-logfile-'));
  const path = join(dir, 'X.log');
  for (let run = 0; run < 2; run++) {
    const file = new RotatingLogFile(path, 1000, 3);
    for (let i = 0; i < 10; i++) await write(file, `${JSON.stringify({ run, i, pad: 'x'.repeat(40) })}\n`);
    await end(file);
  }
  t.deepEqual(readdirSync(dir).sort(), ['X.1.log', 'X.log']);
  t.true(statSync(join(dir, 'X.1.log')).size <= 1000);
});

test('the file also rotates at the first line of a new UTC day, and a file left from an earlier day at the first line today', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-logfile-'));
  const path = join(dir, 'X.log');
  let now = Date.parse('2026-11-26T23:59:58.000Z');
  const file = new RotatingLogFile(path, LOG_FILE_BYTES, 3, () => now);
  await write(file, 'day 1, line 1\n');
  await write(file, 'day 1, line 2\n');
  now = Date.parse('2026-11-27T00:00:01.000Z');
  await write(file, 'day 2, line 1\n');
  await end(file);
  t.is(readFileSync(siblingPath(path, 1), 'utf8'), 'day 1, line 1\nday 1, line 2\n');
  t.is(readFileSync(path, 'utf8'), 'day 2, line 1\n');
  // A runtime stopped overnight: the named file was last written on day 2; the first line of day 3 rotates it.
  utimesSync(path, new Date('2026-11-27T12:00:00Z'), new Date('2026-11-27T12:00:00Z'));
  now = Date.parse('2026-11-28T08:00:00.000Z');
  const again = new RotatingLogFile(path, LOG_FILE_BYTES, 3, () => now);
  await write(again, 'day 3, line 1\n');
  await end(again);
  t.deepEqual(
    [path, siblingPath(path, 1), siblingPath(path, 2)].map((p) => readFileSync(p, 'utf8')),
    ['day 3, line 1\n', 'day 2, line 1\n', 'day 1, line 1\nday 1, line 2\n'],
  );
});

test('-help says what the file does: daily and at 10 MB, 10 files kept', (t) => {
  t.is(LOG_FILE_BYTES, 10 * 1024 * 1024);
  t.is(LOG_FILES, 10);
  const line = usage()
    .split('\n')
    .find((l) => l.includes('-log-file'));
  t.regex(line ?? '', /rotated daily \(at UTC midnight\) and at 10 MB, 10 files kept/);
});
