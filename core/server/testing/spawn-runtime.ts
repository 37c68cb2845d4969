// Test helper: runs the real platform-server (from source, through tsx) on a free port with a config
// file in a temporary folder, and hands back its address and a way to rewrite the config.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { spawnServing } from '../../serving/testing/spawn-serving.js';

// One polling helper for every test; re-exported here, where the runtime's tests have always found it.
export { eventually } from '../../serving/testing/eventually.js';

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
  /** A command that execs node, e.g. ['ip', 'netns', 'exec', 'ns1'] (spawn-serving.ts). */
  prefix?: string[];
}

export async function spawnRuntime(config: Record<string, unknown>, options: SpawnOptions = {}): Promise<SpawnedRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-runtime-'));
  const configPath = join(dir, 'config.json');
  const withPort = { ...config, network: { bind_address: 'localhost:0', ...(config.network as object | undefined) } };
  writeFileSync(configPath, JSON.stringify(withPort, null, 2));
  // -ftdc is on by default: without this every test run would write into the real ~/.platform.
  const env = { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data'), ...options.env };
  const program = await spawnServing(MAIN, ['-config', configPath, ...(options.args ?? [])], {
    name: 'platform-server',
    env,
    nodeFlags: ['--import', 'tsx'],
    servingLine: /platform-server serving on (\S+)/,
    timeoutMs: options.timeoutMs,
    prefix: options.prefix,
  });
  const { address, child, exited, output: text } = program;
  return {
    address,
    configPath,
    ftdcDir: env.PLATFORM_FTDC_DIR!,
    process: child,
    output: text,
    logs: () =>
      text()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    writeConfig(next) {
      const temp = `${configPath}.tmp`;
      writeFileSync(
        temp,
        JSON.stringify({ ...(next as object), network: { bind_address: address, ...((next as { network?: object }).network ?? {}) } }, null, 2),
      );
      renameSync(temp, configPath);
    },
    exited,
    stop: program.stop,
  };
}
