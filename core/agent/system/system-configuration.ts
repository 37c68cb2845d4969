// Applies system_configuration: the journald drop-in, apt's unattended-upgrade files and log
// forwarding. Files are written under `root` (the agent's install root: '' on a machine, a temporary
// folder in tests and with PLATFORM_AGENT_INSTALL_ROOT) and only when their content changes, so a config
// check that changes nothing restarts nothing. Each setting fails on its own: an apt error does not keep
// the journald limits from applying, and nothing here throws into the agent's supervision.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../agent-log.js';
import type { AgentConfig } from '../../config/agent-config.js';
import { writeFileDurable } from '../../serving/durable-file.js';
import { runChecked, type CommandRunner } from './command-runner.js';
import { JOURNALD_DROP_IN, journaldDropIn } from './journald.js';
import { LogForwarder } from './log-forwarding.js';
import { AUTO_UPGRADES_FILE, UNATTENDED_UPGRADES_FILE, autoUpgradesFile, parseAptPolicyOrigins, unattendedUpgradesFile } from './unattended-upgrades.js';

type SystemConfiguration = AgentConfig['system_configuration'];

export interface SystemConfiguratorOptions {
  root: string;
  runner: CommandRunner;
  logger: Logger;
}

export interface ApplyReport {
  changedFiles: string[];
  errors: string[];
}

export class SystemConfigurator {
  private forwarder?: LogForwarder;
  private stopped = false;

  constructor(private readonly opts: SystemConfiguratorOptions) {}

  path(systemPath: string): string {
    return this.opts.root ? join(this.opts.root, systemPath) : systemPath;
  }

  /** Applies every setting; `disabled` (disable_system_configuration) leaves the system as it is. */
  async apply(config: SystemConfiguration, disabled = false): Promise<ApplyReport> {
    const report: ApplyReport = { changedFiles: [], errors: [] };
    if (disabled) {
      await this.stopForwarding();
      return report;
    }
    const step = async (name: string, fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (err) {
        const msg = `${name}: ${(err as Error).message}`;
        report.errors.push(msg);
        this.opts.logger.error({ err: msg }, 'system configuration failed; the rest still applies');
      }
    };
    await step('system_configuration.logging_journald', () => this.applyJournald(config, report));
    await step('system_configuration.os_auto_upgrade_type', () => this.applyUpgrades(config, report));
    await step('system_configuration.forward_system_logs', () => this.applyForwarding(config.forward_system_logs));
    return report;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopForwarding();
  }

  get logForwarder(): LogForwarder | undefined {
    return this.forwarder;
  }

  private async applyJournald(config: SystemConfiguration, report: ApplyReport): Promise<void> {
    const content = journaldDropIn({
      systemMaxUseMegabytes: config.logging_journald_system_max_use_megabytes,
      runtimeMaxUseMegabytes: config.logging_journald_runtime_max_use_megabytes,
    });
    if (!(await this.writeIfChanged(JOURNALD_DROP_IN, content, report))) return;
    await runChecked(this.opts.runner, 'systemctl', ['restart', 'systemd-journald']);
    this.opts.logger.info({ file: this.path(JOURNALD_DROP_IN) }, 'journald limits applied');
  }

  private async applyUpgrades(config: SystemConfiguration, report: ApplyReport): Promise<void> {
    const type = config.os_auto_upgrade_type;
    if (type === '') return; // SPEC.md: empty leaves the system's settings alone.
    if (type === 'disable') {
      await this.writeIfChanged(AUTO_UPGRADES_FILE, autoUpgradesFile('disable'), report);
      return;
    }
    const { runner } = this.opts;
    const status = await runner.run('dpkg-query', ['-W', '-f=${Status}', 'unattended-upgrades']);
    if (status.code !== 0 || !status.stdout.includes('install ok installed')) {
      this.opts.logger.info('installing unattended-upgrades for os_auto_upgrade_type');
      await runChecked(runner, 'apt-get', ['install', '-y', 'unattended-upgrades']);
    }
    const origins = parseAptPolicyOrigins(await runChecked(runner, 'apt-cache', ['policy']));
    await this.writeIfChanged(UNATTENDED_UPGRADES_FILE, unattendedUpgradesFile(type, origins), report);
    await this.writeIfChanged(AUTO_UPGRADES_FILE, autoUpgradesFile(type), report);
  }

  private async applyForwarding(setting: string): Promise<void> {
    if (this.forwarder?.setting === setting) return;
    await this.stopForwarding();
    if (setting.trim() === '' || this.stopped) return;
    this.forwarder = new LogForwarder({ runner: this.opts.runner, logger: this.opts.logger, setting });
    this.forwarder.start();
    this.opts.logger.info({ forward_system_logs: setting }, 'forwarding system logs');
  }

  private async stopForwarding(): Promise<void> {
    const f = this.forwarder;
    this.forwarder = undefined;
    await f?.stop();
  }

  /** Writes the file when its content differs; true when it did. */
  private async writeIfChanged(systemPath: string, content: string, report: ApplyReport): Promise<boolean> {
    const file = this.path(systemPath);
    const current = await readFile(file, 'utf8').catch(() => undefined);
    if (current === content) return false;
    await mkdir(dirname(file), { recursive: true });
    await writeFileDurable(file, content, 0o644);
    report.changedFiles.push(systemPath);
    return true;
  }
}
