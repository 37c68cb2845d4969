// One run of platform-server: spawn, watch its output for the `serving` line, stop with SIGTERM and a
// kill after a grace period. Restart policy lives in RuntimeSupervisor.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

export interface RuntimeLaunch {
  /** Path of the executable (usually the bin/platform-server symlink); any executable file works. */
  binary: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * The address of a `serving` line: the host:port after the word ("serving on 127.0.0.1:8080", "serving
 * at [::1]:8080"), or the `address` field of a JSON log line whose msg is "serving". '' when the line
 * says serving but names no address; undefined when it is not a serving line.
 */
export function servingAddress(line: string): string | undefined {
  const at = line.search(/serving/i);
  if (at < 0) return undefined;
  if (line.trimStart().startsWith('{')) {
    try {
      const obj = JSON.parse(line) as { msg?: unknown; address?: unknown };
      if (typeof obj.msg === 'string' && /serving/i.test(obj.msg)) {
        if (typeof obj.address === 'string' && obj.address) return obj.address;
        return servingAddress(obj.msg) ?? '';
      }
      return undefined;
    } catch {
      // not JSON after all: read it as text
    }
  }
  const m = /(?:[a-z]+:\/\/)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})\b/.exec(line.slice(at));
  return m ? `${m[1]}:${m[2]}` : '';
}

export interface RuntimeProcessEvents {
  serving: [address: string];
  exit: [code: number | null, signal: NodeJS.Signals | null];
  line: [line: string, stream: 'stdout' | 'stderr'];
}

export class RuntimeProcess extends EventEmitter<RuntimeProcessEvents> {
  readonly child: ChildProcess;
  servingAt?: string;
  exited = false;
  spawnError?: Error;
  /** Set once the agent asked it to stop, so that its exit is not taken for a crash. */
  stopRequested = false;
  private readonly exitPromise: Promise<void>;

  constructor(
    readonly launch: RuntimeLaunch,
    output: { stdout: Writable; stderr: Writable },
  ) {
    super();
    // Its own process group (not on Windows), so that whatever it leaves behind (modules, helpers) can be
    // killed with it: SIGTERM goes to the runtime alone, which shuts its modules down in order; after it
    // exits, or at the SIGKILL escalation, the whole group is killed, as systemd's KillMode=mixed does.
    this.child = spawn(launch.binary, launch.args, { env: launch.env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    this.exitPromise = new Promise((resolve) => {
      // 'exit', not 'close': modules started by the runtime may inherit its pipes and keep them open.
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exited) return;
        this.exited = true;
        this.killGroup();
        this.emit('exit', code, signal);
        resolve();
      };
      this.child.once('exit', done);
      // A spawn failure (ENOENT, EACCES) emits 'error' and maybe no 'exit'.
      this.child.once('error', (err) => {
        this.spawnError = err;
        done(null, null);
      });
    });
    for (const [name, stream, sink] of [
      ['stdout', this.child.stdout!, output.stdout],
      ['stderr', this.child.stderr!, output.stderr],
    ] as const) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        sink.write(`${line}\n`);
        this.emit('line', line, name);
        if (!this.servingAt) {
          const address = servingAddress(line);
          if (address === undefined) return;
          const first = this.servingAt === undefined;
          // A first serving line without an address (e.g. a log line) is completed by a later one.
          if (first || address) this.servingAt = address;
          if (first) this.emit('serving', address);
        }
      });
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM, then SIGKILL if it is still alive after `graceMs`. Resolves once it has exited. */
  async stop(graceMs: number): Promise<void> {
    this.stopRequested = true;
    if (this.exited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!this.exited) {
        this.killGroup();
        this.child.kill('SIGKILL');
      }
    }, graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }

  kill(): Promise<void> {
    this.stopRequested = true;
    if (!this.exited) {
      this.killGroup();
      this.child.kill('SIGKILL');
    }
    return this.exitPromise;
  }

  /** SIGKILL to the runtime's process group: the runtime and anything it started that is still there. */
  private killGroup(): void {
    if (process.platform === 'win32' || !this.child.pid) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone
    }
  }

  waitExit(): Promise<void> {
    return this.exitPromise;
  }
}
