// Test helper: runs the real platform-cloud program (from source, through tsx) on a free port in a
// fresh data dir, and runs its admin commands.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const main = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const run = promisify(execFile);

export interface SpawnedCloud {
  address: string;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL, no cleanup: for durability tests. */
  kill9(): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'platform-cloud-test-'));
}

export async function spawnCloud(dataDir = tempDataDir(), extraArgs: string[] = []): Promise<SpawnedCloud> {
  const child = spawn(process.execPath, ['--import', 'tsx', main, 'serve', '--data-dir', dataDir, '--port', '0', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code} before serving: ${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    address,
    dataDir,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `platform-cloud <args> --data-dir DIR --json` and parses its output. */
export async function adminJson<T = Record<string, string>>(dataDir: string, args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', main, ...args, '--data-dir', dataDir, '--json']);
  return JSON.parse(stdout) as T;
}

export function removeDataDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}
