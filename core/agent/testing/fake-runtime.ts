// Fake platform-server builds for the agent's tests: small shell scripts (any executable file is a
// valid runtime binary) that record what happened to them in a log file, one line per event:
//   start <tag> <pid> FOO=<$FOO> BAR=<$BAR> args=<args>      term <tag> <pid>
import { chmodSync, mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface FakeRuntimeOptions {
  /** Written into each log line, to tell versions apart. */
  tag: string;
  /** serve: print the serving line and run until SIGTERM; silent: never print it; crash-once: serve,
   * then exit 3 the first time (a marker file remembers), serve normally after; crash-always: exit 3
   * right after serving, every time; crash-late: exit 3 half a second after serving, every time. */
  mode?: 'serve' | 'silent' | 'crash-once' | 'crash-always' | 'crash-late';
  log: string;
}

export function writeFakeRuntime(dir: string, opts: FakeRuntimeOptions): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `fake-runtime-${opts.tag}.sh`);
  const marker = join(dir, `crashed-${opts.tag}`);
  const mode = opts.mode ?? 'serve';
  const lines = [
    '#!/bin/sh',
    `echo "start ${opts.tag} $$ FOO=$FOO BAR=$BAR args=$*" >> '${opts.log}'`,
    `trap 'echo "term ${opts.tag} $$" >> '"'"'${opts.log}'"'"'; kill $! 2>/dev/null; exit 0' TERM`,
    mode === 'silent' ? 'echo "starting up (never serves)"' : `echo "fake runtime ${opts.tag} serving on 127.0.0.1:45678"`,
    mode === 'crash-once' ? `if [ ! -e '${marker}' ]; then touch '${marker}'; echo "crashing" >&2; exit 3; fi` : '',
    mode === 'crash-always' ? 'echo "crashing" >&2; exit 3' : '',
    mode === 'crash-late' ? 'sleep 0.5; echo "crashing" >&2; exit 3' : '',
    'sleep 600 & wait $!',
    '',
  ];
  writeFileSync(path, lines.join('\n'));
  chmodSync(path, 0o755);
  return path;
}

export interface RuntimeEvent {
  kind: 'start' | 'term';
  tag: string;
  pid: number;
  foo?: string;
  bar?: string;
  args?: string;
}

export function readRuntimeLog(log: string): RuntimeEvent[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, tag, pid] = line.split(' ');
      const foo = /FOO=(\S*)/.exec(line)?.[1];
      const bar = /BAR=(\S*)/.exec(line)?.[1];
      const args = /args=(.*)$/.exec(line)?.[1];
      return { kind: kind as 'start' | 'term', tag, pid: Number(pid), foo, bar, args };
    });
}
