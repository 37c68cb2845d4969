// Test helper: runs the real platform-cloud program (from source, through tsx) on a free port in a
// fresh data dir, and runs its admin commands.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnServing } from '../../core/serving/testing/spawn-serving.js';

const main = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const run = promisify(execFile);

export interface SpawnedCloud {
  address: string;
  /** http://host:port/ of the data browser (the `platform-cloud web page on` line). */
  webUrl: string;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL, no cleanup: for durability tests. */
  kill9(): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'platform-cloud-test-'));
}

/** `env` is added to this process' environment for the cloud (settings such as PLATFORM_LOGIN_*). */
export async function spawnCloud(dataDir = tempDataDir(), extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SpawnedCloud> {
  const program = await spawnServing(main, ['serve', '--data-dir', dataDir, '--port', '0', ...extraArgs], {
    name: 'platform-cloud',
    env: { ...process.env, ...env },
    nodeFlags: ['--import', 'tsx'],
    timeoutMs: 180_000,
  });
  const web = /platform-cloud web page on (http:\/\/\S+)/.exec(program.output());
  return {
    address: program.address,
    webUrl: web?.[1] ?? '',
    dataDir,
    child: program.child,
    stop: async () => void (await program.stop()),
    kill9: async () => void (await program.kill9()),
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
