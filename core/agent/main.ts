#!/usr/bin/env node
// platform-agent: the self-updating service manager of platform-server. See README.md, "The agent".
import { Agent } from './agent.js';
import { Logger } from './agent-log.js';
import { parseAgentArgs } from './cli.js';
import { agentPaths, INSTALL_ROOT_ENV } from './paths.js';
import { installService } from './service-install.js';
import { DryRunner, ProcessRunner } from './system/command-runner.js';
import { TimeScale } from './time-scale.js';

/** A `host:port` address from the environment, for the provisioning endpoints. */
function address(env: NodeJS.ProcessEnv, name: string, fallback: string): { host: string; port: number } {
  const raw = env[name] || fallback;
  const i = raw.lastIndexOf(':');
  const port = Number(raw.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} ${raw}: must be host:port with a port from 0 to 65535`);
  return { host: raw.slice(0, i), port };
}

async function main(): Promise<number> {
  const env = process.env;
  const cli = parseAgentArgs(process.argv.slice(2), env);
  const logger = new Logger(cli.debug ? 'debug' : 'info');
  const installRoot = env[INSTALL_ROOT_ENV] || undefined;
  const paths = agentPaths({ devMode: cli.devMode, config: cli.config, defaults: cli.defaults, installRoot, env });

  if (cli.install) {
    if (!installRoot && process.platform !== 'win32' && process.getuid?.() !== 0) {
      logger.error('--install needs root');
      return 1;
    }
    await installService({ paths, env, logger, installRoot });
    return 0;
  }
  if (!cli.devMode && process.platform !== 'win32') {
    if (process.getuid?.() !== 0) {
      logger.error('platform-agent runs as root; use --dev-mode (or PLATFORM_AGENT_DEVMODE=1) to run as an ordinary user');
      return 1;
    }
    if (!env.INVOCATION_ID) {
      logger.warn('not started by systemd: self-updates exit the agent and nothing restarts it; use --install, or --dev-mode to silence this');
    }
  }

  let time: TimeScale;
  try {
    time = TimeScale.fromEnv(env);
  } catch (err) {
    logger.error((err as Error).message);
    return 1;
  }
  // The network is managed only by the installed service on Linux, through NetworkManager on the system
  // bus; a dev-mode agent leaves the developer's network alone.
  let network: { backend: import('./network/backend.js').NetworkBackend } | undefined;
  if (!paths.systemRoot && process.platform === 'linux') {
    const { NetworkManagerBackend } = await import('./network/nm-backend.js');
    const backend = await NetworkManagerBackend.onSystemBus((err) => logger.warn({ err: err.message }, 'D-Bus system bus error'));
    if (backend) network = { backend };
  }
  const finished = new Promise<number>((resolve) => {
    const agent = new Agent({
      paths,
      env,
      time,
      logger,
      output: { stdout: process.stdout, stderr: process.stderr },
      debug: cli.debug,
      waitForUpdate: cli.wait,
      fastStart: cli.fastStart,
      allowInsecureCreds: cli.allowInsecureCreds,
      // Under a dev folder or an install root the system files are written there, and commands that
      // would change this machine are only logged.
      runner: paths.systemRoot
        ? new DryRunner((command) => logger.info({ command, system_root: paths.systemRoot }, 'system command not run (dev mode or install root)'))
        : new ProcessRunner(),
      network,
      provisioning: {
        portal: address(env, 'PLATFORM_AGENT_PORTAL_ADDRESS', '0.0.0.0:80'),
        grpc: address(env, 'PLATFORM_AGENT_PROVISIONING_ADDRESS', '0.0.0.0:4772'),
      },
      exit: (code) => resolve(code),
    });
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'stopping');
      void agent.stop().then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGHUP', () => void agent.check());
    agent.start().catch((err: Error) => {
      logger.error({ err: err.message }, 'platform-agent cannot start');
      void agent.stop().then(() => resolve(1));
    });
  });
  return await finished;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`platform-agent: ${err.message}\n`);
    process.exit(1);
  },
);
