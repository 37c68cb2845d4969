import test from 'ava';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { RuntimeProcess } from './runtime-process.js';

function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-agent-proc-'));
  const path = join(dir, 'runtime.sh');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const sinks = () => ({ stdout: new PassThrough().resume(), stderr: new PassThrough().resume() });

test('a serving log line without an address is completed by the next line that has one', async (t) => {
  const proc = new RuntimeProcess(
    {
      binary: script(`echo '{"level":30,"msg":"serving"}'\necho 'platform-server serving on 127.0.0.1:4321'\ntrap 'exit 0' TERM\nsleep 100 & wait $!`),
      args: [],
      env: process.env,
    },
    sinks(),
  );
  const first = new Promise<string>((resolve) => proc.once('serving', resolve));
  const second = new Promise<void>((resolve) => proc.on('line', (line) => line.includes('4321') && resolve()));
  t.is(await first, '');
  await second;
  t.is(proc.servingAt, '127.0.0.1:4321');
  await proc.stop(5000);
  t.true(proc.stopRequested);
});

test('stop escalates to SIGKILL when SIGTERM is ignored', async (t) => {
  const proc = new RuntimeProcess({ binary: script(`trap '' TERM\necho ready\nwhile :; do sleep 1; done`), args: [], env: process.env }, sinks());
  await new Promise<void>((resolve) => proc.on('line', (l) => l === 'ready' && resolve()));
  const exit = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
  await proc.stop(200);
  t.is(await exit, 'SIGKILL');
});

test('a binary that cannot be executed exits with its spawn error', async (t) => {
  const path = script('echo never');
  chmodSync(path, 0o644);
  const proc = new RuntimeProcess({ binary: path, args: [], env: process.env }, sinks());
  await proc.waitExit();
  t.regex(String(proc.spawnError?.message), /EACCES/);
});

test('what the runtime leaves behind in its process group is killed when it exits', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-agent-proc-'));
  const pidFile = join(dir, 'child.pid');
  const proc = new RuntimeProcess(
    { binary: script(`sleep 600 &\necho $! > '${pidFile}'\necho serving on 127.0.0.1:1\nsleep 0.2\nexit 3`), args: [], env: process.env },
    sinks(),
  );
  await proc.waitExit();
  const { readFileSync } = await import('node:fs');
  const child = Number(readFileSync(pidFile, 'utf8'));
  // The leftover is killed (it may linger a moment as a zombie of init; signal 0 then fails).
  let alive = true;
  for (let i = 0; i < 50 && alive; i++) {
    try {
      process.kill(child, 0);
      const state = readFileSync(`/proc/${child}/stat`, 'utf8').split(' ')[2];
      alive = state !== 'Z';
    } catch {
      alive = false;
    }
    if (alive) await new Promise((r) => setTimeout(r, 20));
  }
  t.false(alive);
});
