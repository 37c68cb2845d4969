// Test helper: runs the real platform-server (from source, through tsx) on a free port with a config
// file in a temporary folder, and hands back its address and a way to rewrite the config.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface SpawnedRuntime {
  address: string;
  configPath: string;
  /** Where full-time data capture writes: a temporary folder unless the test set PLATFORM_FTDC_DIR. */
  ftdcDir: string;
  process: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[];
  /** Replaces the config file atomically (write to a temp file, then rename), as editors and the agent do. */
  writeConfig(config: unknown): void;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

export interface SpawnOptions {
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the serving line. */
  timeoutMs?: number;
}

export async function spawnRuntime(config: Record<string, unknown>, options: SpawnOptions = {}): Promise<SpawnedRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-runtime-'));
  const configPath = join(dir, 'config.json');
  const withPort = { ...config, network: { bind_address: 'localhost:0', ...(config.network as object | undefined) } };
  writeFileSync(configPath, JSON.stringify(withPort, null, 2));
  // -ftdc is on by default: without this every test run would write into the real ~/.platform.
  const env = { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data'), ...options.env };
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '-config', configPath, ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`platform-server did not print its serving line in time:\n${text}`)), options.timeoutMs ?? 90_000);
    const check = () => {
      const match = /platform-server serving on (\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`platform-server exited with ${code} before serving:\n${text}`));
    });
  });
  return {
    address,
    configPath,
    ftdcDir: env.PLATFORM_FTDC_DIR!,
    process: child,
    output: () => text,
    logs: () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    writeConfig(next) {
      const temp = `${configPath}.tmp`;
      writeFileSync(temp, JSON.stringify({ ...(next as object), network: { bind_address: address, ...((next as { network?: object }).network ?? {}) } }, null, 2));
      renameSync(temp, configPath);
    },
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Polls until `predicate` holds (it may be async), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T> | T, predicate: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (predicate(last)) return last;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(last)}${lastError ? `, last error ${String(lastError)}` : ''}`);
}
