// Test helper: runs the real platform-micro-server (from source through tsx, or a built bundle) and,
// beside it, the real platform-server, each with the -config file given, waiting for their serving lines.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { spawnServing, type ServingProgram } from '../../serving/testing/spawn-serving.js';

const MICRO_MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));
const SERVER_MAIN = fileURLToPath(new URL('../../server/main.ts', import.meta.url));

export interface SpawnProgramOptions {
  env?: NodeJS.ProcessEnv;
  args?: string[];
  /**
   * Run this bundle (dist/platform-micro-server.mjs) instead of the sources: platform-micro-server as an
   * executable, the way the installed command runs (its first line sets its node flags and GLIBC_TUNABLES).
   */
  bundle?: string;
  /** With `bundle`: run it as `node <bundle>` instead, without the flags of its first line. */
  plainNode?: boolean;
  /** Node's own flags, such as --max-old-space-size. */
  nodeFlags?: string[];
}

/** platform-micro-server with `configPath`; state it keeps (the online config cache) goes under `dir`. */
export function spawnMicro(configPath: string, dir: string, options: SpawnProgramOptions = {}): Promise<ServingProgram> {
  const script = options.bundle ?? MICRO_MAIN;
  return spawnServing(script, ['-config', configPath, ...(options.args ?? [])], {
    name: 'platform-micro-server',
    env: { ...process.env, HOME: dir, ...options.env },
    nodeFlags: [...(options.bundle ? [] : ['--import', 'tsx']), ...(options.nodeFlags ?? [])],
    direct: options.bundle !== undefined && !options.plainNode,
    servingLine: /platform-micro-server serving on (\S+)/,
  });
}

/** platform-server with `configPath`; its full-time data capture writes under `dir`, not into ~/.platform. */
export function spawnFullServer(configPath: string, dir: string, options: SpawnProgramOptions = {}): Promise<ServingProgram> {
  return spawnServing(options.bundle ?? SERVER_MAIN, ['-config', configPath, ...(options.args ?? [])], {
    name: 'platform-server',
    env: { ...process.env, HOME: dir, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data'), ...options.env },
    nodeFlags: [...(options.bundle ? [] : ['--import', 'tsx']), ...(options.nodeFlags ?? [])],
    servingLine: /platform-server serving on (\S+)/,
  });
}
