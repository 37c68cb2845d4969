// The operating-system side of the agent config: system_configuration (journald, apt, log forwarding)
// and the network (additional_networks, the provisioning state machine). Both run beside the runtime's
// supervision and never throw into it: a failure is logged, and the runtime keeps running.
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from './agent-log.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { NetworkBackend } from './network/backend.js';
import { systemClock, type Clock } from './network/clock.js';
import { NETWORK_CHECK_SECONDS, NetworkSupervisor } from './network/network-supervisor.js';
import type { CommandRunner } from './system/command-runner.js';
import { SystemConfigurator } from './system/system-configuration.js';
import type { TimeScale } from './time-scale.js';
import { ProvisioningEndpoints, type ProvisioningAddresses } from './network/provisioning-endpoints.js';
import { writeCaptiveDns } from './network/captive-dns.js';
import type { NetworkState } from './network/network-supervisor.js';

export interface MachineSettingsOptions {
  /** Prefix of the system files ('' on a machine). */
  systemRoot: string;
  runner: CommandRunner;
  logger: Logger;
  time: TimeScale;
  /** The machine's network stack; without one, network_configuration is validated but not applied. */
  network?: { backend: NetworkBackend; clock?: Clock };
  /** Where the captive portal and the provisioning gRPC service listen while provisioning. */
  provisioning?: ProvisioningAddresses;
  /** Where machine credentials submitted during provisioning go. */
  credentialsFile: string;
  /** Machine credentials were saved through provisioning: they are read at start, so the agent restarts online. */
  onCredentials?: () => void;
}

export class MachineSettings {
  readonly system: SystemConfigurator;
  readonly network?: NetworkSupervisor;
  private systemApplying: Promise<void> = Promise.resolve();
  private stopped = false;
  private endpoints?: ProvisioningEndpoints;
  private endpointsChange: Promise<void> = Promise.resolve();
  private config?: AgentConfig;

  constructor(private readonly opts: MachineSettingsOptions) {
    this.system = new SystemConfigurator({ root: opts.systemRoot, runner: opts.runner, logger: opts.logger });
    if (opts.network) {
      this.network = new NetworkSupervisor({
        backend: opts.network.backend,
        clock: opts.network.clock ?? systemClock,
        runner: opts.runner,
        logger: opts.logger,
        minutes: (n) => opts.time.minutes(n),
        checkIntervalMs: opts.time.seconds(NETWORK_CHECK_SECONDS),
        onStateChange: (state) => this.networkState(state),
        signals: true,
      });
    }
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  async start(config: AgentConfig): Promise<void> {
    this.config = config;
    this.applySystem(config);
    if (!this.network) {
      if (!config.advanced_settings.disable_network_configuration)
        this.log.info('no network backend on this machine: additional_networks and provisioning are not applied');
      return;
    }
    await this.configureNetwork(config);
    this.network.start();
  }

  /** Applies what changed between two effective configs. */
  changed(prev: AgentConfig, next: AgentConfig): void {
    this.config = next;
    if (
      !isDeepStrictEqual(prev.system_configuration, next.system_configuration) ||
      prev.advanced_settings.disable_system_configuration !== next.advanced_settings.disable_system_configuration
    )
      this.applySystem(next);
    if (
      !isDeepStrictEqual(prev.network_configuration, next.network_configuration) ||
      !isDeepStrictEqual(prev.additional_networks, next.additional_networks) ||
      prev.advanced_settings.disable_network_configuration !== next.advanced_settings.disable_network_configuration
    )
      void this.configureNetwork(next);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.network?.stop();
    await this.endpointsChange;
    await this.endpoints?.stop();
    // An apply in flight (apt-get install can take minutes) is not awaited: stopping must not wait for
    // it, and once stopped the configurator starts nothing new.
    await this.system.stop();
  }

  /** The portal and the gRPC service run exactly while provisioning. */
  private networkState(state: NetworkState): void {
    const network = this.network;
    if (!network || !this.opts.provisioning || !this.opts.network) return;
    this.endpoints ??= new ProvisioningEndpoints({
      addresses: this.opts.provisioning,
      network,
      backend: this.opts.network.backend,
      config: () => this.config!,
      credentialsFile: this.opts.credentialsFile,
      logger: this.log,
      credentialsSaved: () => this.opts.onCredentials?.(),
    });
    const endpoints = this.endpoints;
    this.endpointsChange = this.endpointsChange
      .then(() => (state === 'provisioning' && !this.stopped ? endpoints.start() : endpoints.stop()))
      .catch((err: Error) => this.log.error({ err: err.message }, 'provisioning endpoints failed'));
  }

  private async configureNetwork(config: AgentConfig): Promise<void> {
    try {
      if (this.network && !config.advanced_settings.disable_network_configuration) {
        if (await writeCaptiveDns(this.opts.systemRoot, config.network_configuration.disable_captive_portal_redirect))
          this.log.info(
            { redirect: config.network_configuration.disable_captive_portal_redirect ? '.setup names' : 'every name' },
            'captive portal DNS written',
          );
      }
      await this.network?.configure(config);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'network configuration failed');
    }
  }

  /** One run at a time, in the background. */
  private applySystem(config: AgentConfig): void {
    this.systemApplying = this.systemApplying
      .then(async () => {
        if (this.stopped) return;
        const report = await this.system.apply(config.system_configuration, config.advanced_settings.disable_system_configuration);
        if (report.changedFiles.length) this.log.info({ files: report.changedFiles, root: this.opts.systemRoot || '/' }, 'system configuration applied');
      })
      .catch((err: Error) => this.log.error({ err: err.message }, 'system configuration failed'));
  }
}
