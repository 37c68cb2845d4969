// --install: puts the agent in place as a system service. On Linux a systemd unit `platform-agent`
// (Restart=always after 5 s), enabled by linking it into multi-user.target.wants exactly as
// `systemctl enable` would, then started. On Windows a service created with sc.exe that restarts on
// failure. Every system path can be prefixed (PLATFORM_AGENT_INSTALL_ROOT) to test against a temp root.
import { execFile } from 'node:child_process';
import { mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from './agent-log.js';
import { AGENT_VERSION } from './agent-version.js';
import { BinaryCache } from './binary-cache.js';
import { credentialsFileContent, credentialsFromEnv, loadMachineSource } from './credentials.js';
import { writeFileDurable } from '../serving/durable-file.js';
import type { AgentPaths } from './paths.js';
import { STOP_GRACE_SECONDS } from './runtime-supervisor.js';

export const SERVICE_NAME = 'platform-agent';

export function systemdUnit(paths: AgentPaths, agentLink: string): string {
  return `# Written by platform-agent --install.
[Unit]
Description=platform-agent: installs, runs and updates platform-server
After=network-online.target
Wants=network-online.target
# Never give up restarting: the agent exits on purpose after a self-update.
StartLimitIntervalSec=0

[Service]
Type=simple
ExecStart=${agentLink} --config ${paths.configFile} --defaults ${paths.defaultsFile}
Restart=always
RestartSec=5
User=root
# The agent stops platform-server with SIGTERM and kills it after ${STOP_GRACE_SECONDS} s; give it that long.
TimeoutStopSec=${STOP_GRACE_SECONDS + 30}
KillMode=mixed

[Install]
WantedBy=multi-user.target
`;
}

/** The sc.exe command lines that install the Windows service (documented in README.md). */
export function windowsServiceCommands(agentLink: string, paths: AgentPaths): string[][] {
  const bin = `"${agentLink}" --config "${paths.configFile}" --defaults "${paths.defaultsFile}"`;
  return [
    ['sc.exe', 'create', SERVICE_NAME, `binPath=`, bin, 'start=', 'delayed-auto', 'DisplayName=', 'platform-agent'],
    ['sc.exe', 'failure', SERVICE_NAME, 'reset=', '0', 'actions=', 'restart/5000/restart/5000/restart/5000'],
    ['sc.exe', 'start', SERVICE_NAME],
  ];
}

/**
 * V8 flags the service runs the agent with. Lite mode turns off the optimizing compiler: the agent
 * mostly waits on timers, pipes and sockets, and this keeps its idle RSS about 10 MB lower
 * (bench:agent-rss). Lite mode has no WebAssembly (stated explicitly, which also silences V8's warning),
 * which is why downloads use node:http rather than fetch.
 */
export const AGENT_NODE_FLAGS = ['--lite-mode', '--no-expose-wasm'];

/** A launcher for the running agent build, so that bin/platform-agent is one executable file. */
export function launcherScript(argv = process.argv, execPath = process.execPath, execArgv = process.execArgv): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const flags = [...AGENT_NODE_FLAGS.filter((f) => !execArgv.includes(f)), ...execArgv];
  return `#!/bin/sh\n# platform-agent ${AGENT_VERSION}, written by --install\nexec ${[execPath, ...flags, argv[1]].map(quote).join(' ')} "$@"\n`;
}

export interface InstallOptions {
  paths: AgentPaths;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Set when installing into a temporary root: write files only, run no systemctl. */
  installRoot?: string;
  platform?: NodeJS.Platform;
}

export async function installService(opts: InstallOptions): Promise<{ unitFile?: string; agentLink: string }> {
  const { paths, logger } = opts;
  const creds = credentialsFromEnv(opts.env);
  if (creds) {
    await writeFileDurable(paths.configFile, credentialsFileContent(creds), 0o600);
    logger.info({ file: paths.configFile }, 'wrote machine credentials from PLATFORM_API_KEY_ID, PLATFORM_API_KEY, PLATFORM_PART_ID');
  } else {
    // A service without credentials (nor an offline machine config) would only fail at every start:
    // refuse now, before anything is installed, and say what is missing.
    try {
      const source = await loadMachineSource(paths.configFile, opts.env);
      logger.info({ file: paths.configFile, mode: source.mode }, 'using the machine config file already in place');
    } catch (err) {
      throw new Error(`--install needs machine credentials: ${(err as Error).message}`, { cause: err });
    }
  }
  const cache = new BinaryCache(paths.cacheDir, paths.binDir, logger);
  const agentLink = cache.linkPath('agent');
  // Keep an agent that an update already installed; otherwise install this build.
  if (!(await readlink(agentLink).catch(() => undefined))) {
    const launcher = join(paths.cacheDir, `agent-${AGENT_VERSION}-launcher`);
    await writeFileDurable(launcher, launcherScript(), 0o755);
    await cache.install('agent', launcher);
  }
  if ((opts.platform ?? process.platform) === 'win32') {
    for (const cmd of windowsServiceCommands(agentLink, paths)) {
      if (!opts.installRoot) await promisify(execFile)(cmd[0], cmd.slice(1));
    }
    return { agentLink };
  }
  const unitFile = join(paths.systemdDir, `${SERVICE_NAME}.service`);
  await writeFileDurable(unitFile, systemdUnit(paths, agentLink));
  const wants = join(paths.systemdDir, 'multi-user.target.wants');
  await mkdir(wants, { recursive: true });
  await rm(join(wants, `${SERVICE_NAME}.service`), { force: true });
  await symlink(unitFile, join(wants, `${SERVICE_NAME}.service`));
  logger.info({ unitFile }, 'systemd unit written and enabled');
  if (!opts.installRoot) {
    try {
      await promisify(execFile)('systemctl', ['daemon-reload']);
      await promisify(execFile)('systemctl', ['restart', SERVICE_NAME]);
      logger.info('platform-agent service started');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'could not start the service with systemctl; it starts at the next boot');
    }
  }
  return { unitFile, agentLink };
}
