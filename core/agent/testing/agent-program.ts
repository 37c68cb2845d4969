// Runs the real platform-agent program (from source) in dev mode under a temporary folder, and lets a
// test wait for its JSON log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface LogLine {
  msg?: string;
  [key: string]: unknown;
}

export class AgentProgram {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  readonly raw: string[] = [];
  private waiters: { pred: (l: LogLine) => boolean; from: number; resolve: (l: LogLine) => void }[] = [];
  readonly exited: Promise<number | null>;

  /** nodeFlags: V8/Node flags, e.g. the service's AGENT_NODE_FLAGS. */
  constructor(args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []) {
    this.child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', main, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (text) => {
        this.raw.push(text);
        let line: LogLine;
        try {
          line = JSON.parse(text) as LogLine;
        } catch {
          line = { msg: undefined, text };
        }
        this.lines.push(line);
        const index = this.lines.length - 1;
        this.waiters = this.waiters.filter((w) => {
          if (index >= w.from && w.pred(line)) {
            w.resolve(line);
            return false;
          }
          return true;
        });
      });
    }
  }

  /** The first log line from index `from` on that matches; fails after `ms` with the log so far. */
  waitFor(pred: ((l: LogLine) => boolean) | string, from = 0, ms = 60_000): Promise<LogLine> {
    const test = typeof pred === 'string' ? (l: LogLine) => l.msg === pred : pred;
    const found = this.lines.slice(from).find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${String(pred)}; output:\n${this.raw.join('\n')}`)), ms);
      this.waiters.push({ pred: test, from, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  count(msg: string): number {
    return this.lines.filter((l) => l.msg === msg).length;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

export interface AgentSandbox {
  dir: string;
  home: string;
  config: string;
  defaults: string;
  log: string;
  env: NodeJS.ProcessEnv;
  writeConfig(doc: unknown): void;
}

export function agentSandbox(timeScale = 0.01): AgentSandbox {
  const dir = mkdtempSync(join(tmpdir(), 'platform-agent-test-'));
  const config = join(dir, 'machine.json');
  return {
    dir,
    home: join(dir, 'home'),
    config,
    defaults: join(dir, 'defaults.json'),
    log: join(dir, 'runtime.log'),
    env: {
      ...process.env,
      PLATFORM_AGENT_HOME: join(dir, 'home'),
      PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data'),
      PLATFORM_AGENT_TIME_SCALE: String(timeScale),
      FOO: 'agent-env',
    },
    writeConfig(doc: unknown) {
      // Write-then-rename, as an editor or the cloud sync would, so the agent never reads half a file.
      const tmp = `${config}.tmp`;
      writeFileSync(tmp, JSON.stringify(doc));
      renameSync(tmp, config);
    },
  };
}
