import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProcStat } from './proc-stat.js';

test('self: its parent is this process’ parent, and its start time is a number of ticks', (t) => {
  const stat = readProcStat('self');
  t.truthy(stat);
  t.is(stat!.parent, process.ppid);
  t.regex(stat!.startTime, /^\d+$/);
  t.is(stat!.state, 'R', 'this process is running while it reads its own line');
});

test('a command name holding ") " and "(" is read past: parent, group and state are the right fields', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'proc-stat-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const odd = join(dir, 'x) 1 2 (y');
  copyFileSync('/bin/sleep', odd);
  chmodSync(odd, 0o755);
  const child = spawn(odd, ['30'], { stdio: 'ignore', detached: true });
  t.teardown(() => child.kill('SIGKILL'));
  await once(child, 'spawn');
  const stat = readProcStat(child.pid!);
  t.truthy(stat);
  t.is(stat!.parent, process.pid);
  t.is(stat!.group, child.pid!, 'detached: the leader of a group of its own');
  t.regex(stat!.state, /^[RSD]$/, 'alive, not a zombie');
  child.kill('SIGKILL');
  await once(child, 'exit');
  t.is(readProcStat(child.pid!), undefined, 'reaped: gone');
});

test('no such process: undefined', (t) => {
  t.is(readProcStat(2 ** 22 + 1), undefined);
});
