// The agent's command line (SPEC.md "Agent process options") and the environment variables that set
// the same things.
import { Command } from 'commander';

export const AGENT_ENV = {
  debug: 'PLATFORM_AGENT_DEBUG',
  wait: 'PLATFORM_AGENT_WAIT_FOR_UPDATE',
  devMode: 'PLATFORM_AGENT_DEVMODE',
  fastStart: 'PLATFORM_AGENT_FAST_START',
} as const;

export interface AgentCliOptions {
  config?: string;
  defaults?: string;
  debug: boolean;
  wait: boolean;
  install: boolean;
  devMode: boolean;
  fastStart: boolean;
  allowInsecureCreds: boolean;
}

/** "1", "true", "yes", "on" (any case) are true. */
export function envFlag(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

export function agentCommand(): Command {
  return new Command('platform-agent')
    .description('Installs, runs, monitors and updates platform-server, and updates itself.')
    .option('-c, --config <file>', 'path to machine credentials file (default /etc/platform.json; <dev folder>/platform.json with --dev-mode)')
    .option('--defaults <file>', 'path to manufacturer defaults file (default /etc/platform-defaults.json)')
    .option('-d, --debug', `debug logging for the agent only (env ${AGENT_ENV.debug})`)
    .option('-w, --wait', `update versions before starting platform-server (env ${AGENT_ENV.wait})`)
    .option('--install', 'install the system service (systemd unit platform-agent) and exit')
    .option('--dev-mode', `allow running as non-root and not as a service; every path under a dev folder (env ${AGENT_ENV.devMode})`)
    .option('--allow-insecure-creds', 'allow the machine credentials to be sent in plaintext to a cloud address that is not loopback')
    .helpOption('-h, --help', 'show help')
    .addHelpText(
      'after',
      `\nEnvironment:\n  ${AGENT_ENV.fastStart}=1      start platform-server without waiting for an update check\n  PLATFORM_API_KEY_ID, PLATFORM_API_KEY, PLATFORM_PART_ID   machine credentials (install time)\n  PLATFORM_AGENT_HOME            the agent's folder (default /opt/platform; dev: ~/.platform/agent-dev)\n  PLATFORM_AGENT_TIME_SCALE      factor applied to every timeout (tests; default 1)\n`,
    )
    .allowExcessArguments(false);
}

export function parseAgentArgs(argv: string[], env: NodeJS.ProcessEnv, command = agentCommand()): AgentCliOptions {
  command.parse(argv, { from: 'user' });
  const o = command.opts<{
    config?: string;
    defaults?: string;
    debug?: boolean;
    wait?: boolean;
    install?: boolean;
    devMode?: boolean;
    allowInsecureCreds?: boolean;
  }>();
  return {
    config: o.config,
    defaults: o.defaults,
    debug: !!o.debug || envFlag(env[AGENT_ENV.debug]),
    wait: !!o.wait || envFlag(env[AGENT_ENV.wait]),
    install: !!o.install,
    devMode: !!o.devMode || envFlag(env[AGENT_ENV.devMode]),
    fastStart: env[AGENT_ENV.fastStart] === '1',
    allowInsecureCreds: !!o.allowInsecureCreds,
  };
}
