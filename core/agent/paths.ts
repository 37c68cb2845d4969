// Where the agent keeps its files. A service install uses fixed system paths; --dev-mode puts every
// path under one dev folder so that a developer can run the agent as an ordinary user.
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface AgentPaths {
  /** Everything the agent writes lives below this folder. */
  root: string;
  /** Symlinks `platform-agent` and `platform-server`, pointing into the cache. */
  binDir: string;
  /** Downloaded binaries, one file per version, and partial downloads (`*.part`). */
  cacheDir: string;
  /** The last cloud answer, so that a restart without network runs with the last known config. */
  stateFile: string;
  /** Machine credentials file, or a whole machine config for offline use. */
  configFile: string;
  /** Manufacturer defaults for the `agent` object. */
  defaultsFile: string;
  /** Folder of the systemd unit written by --install. */
  systemdDir: string;
  /**
   * Prefix of the operating-system files that system_configuration writes (journald, apt): '' on a
   * machine, the install root with PLATFORM_AGENT_INSTALL_ROOT, `<dev folder>/system` with --dev-mode.
   */
  systemRoot: string;
}

export const HOME_ENV = 'PLATFORM_AGENT_HOME';
/** Prefix for every system path (/etc, /opt, the systemd folder); for packaging and tests. */
export const INSTALL_ROOT_ENV = 'PLATFORM_AGENT_INSTALL_ROOT';

/** The dev folder: $PLATFORM_AGENT_HOME, else ~/.platform/agent-dev. */
export function devRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env[HOME_ENV] || join(homedir(), '.platform', 'agent-dev');
}

/** The system install root: $PLATFORM_AGENT_HOME, else /opt/platform (C:\opt\platform on Windows). */
export function systemRoot(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env[HOME_ENV]) return env[HOME_ENV]!;
  return platform === 'win32' ? 'C:\\opt\\platform' : '/opt/platform';
}

export interface PathOptions {
  devMode: boolean;
  config?: string;
  defaults?: string;
  /** Prefix for system files (systemd unit, /etc): lets --install be tested against a temporary root. */
  installRoot?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

export function agentPaths(opts: PathOptions): AgentPaths {
  const env = opts.env ?? process.env;
  const sys = (p: string) => (opts.installRoot ? join(opts.installRoot, p) : p);
  const root = opts.devMode ? devRoot(env) : env[HOME_ENV] ? env[HOME_ENV]! : sys(systemRoot(env, opts.platform));
  const etc = opts.devMode ? root : sys((opts.platform ?? process.platform) === 'win32' ? 'C:\\etc' : '/etc');
  return {
    root,
    binDir: join(root, 'bin'),
    cacheDir: join(root, 'cache'),
    stateFile: join(root, 'agent-state.json'),
    configFile: opts.config ?? join(etc, 'platform.json'),
    defaultsFile: opts.defaults ?? join(etc, 'platform-defaults.json'),
    systemdDir: opts.devMode ? join(root, 'systemd') : sys('/etc/systemd/system'),
    systemRoot: opts.devMode ? join(root, 'system') : (opts.installRoot ?? ''),
  };
}
