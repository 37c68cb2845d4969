// The agent: layers its config, keeps platform-server running (RuntimeSupervisor), checks for new
// versions and config (cloud, or the offline config file), and applies changes: a platform_server_env
// change or a new runtime version restarts the runtime inside the maintenance window; a new agent
// version is installed and the agent exits so that the service manager starts the new one.
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Writable } from 'node:stream';
import type { Logger } from './agent-log.js';
import type { DeviceAgentConfigResponse, UpdateInfo } from '../../gen/platform/app/agent/v1/agent.js';
import type { AgentConfig } from '../config/agent-config.js';
import { AGENT_VERSION } from './agent-version.js';
import { BinaryCache } from './binary-cache.js';
import type { AgentCloudClient } from './agent-service-client.js';
import { effectiveAgentConfig, readDefaultsLayer, type Layer } from './config-layers.js';
import { credentialsFileContent, credentialsFromEnv, loadMachineSource, machineSourceOf, type MachineSource } from './credentials.js';
import { writeFileDurable } from '../serving/durable-file.js';
import type { Subsystem } from './errors.js';
import type { MaintenanceGate } from './maintenance-window.js';
import { maintenanceConfigOf, type MaintenanceConfig } from './maintenance-config.js';
import type { AgentPaths } from './paths.js';
import { RuntimeSupervisor } from './runtime-supervisor.js';
import type { TimeScale } from './time-scale.js';
import { VersionControl } from './version-control.js';
import { exists, layerOf, readState, stampOf, type SavedState } from './agent-state.js';
import type { CommandRunner } from './system/command-runner.js';
import { MachineSettings, type MachineSettingsOptions } from './machine-settings.js';

/** Default time between update checks when the cloud does not say otherwise. */
export const UPDATE_CHECK_SECONDS = 300;
/** How often a deferred restart asks the maintenance window again, and a failed wait-for-update retries. */
export const RETRY_SECONDS = 10;
/** How often the offline config file is looked at for changes (real time, not scaled). */
export const CONFIG_POLL_MS = 1000;

export interface AgentOptions {
  paths: AgentPaths;
  env: NodeJS.ProcessEnv;
  time: TimeScale;
  logger: Logger;
  output: { stdout: Writable; stderr: Writable };
  /** -d / PLATFORM_AGENT_DEBUG */
  debug: boolean;
  /** -w / PLATFORM_AGENT_WAIT_FOR_UPDATE */
  waitForUpdate: boolean;
  /** PLATFORM_AGENT_FAST_START=1 */
  fastStart: boolean;
  /** Called after a self-update, once the runtime has stopped: the process exits for the service manager. */
  exit: (code: number) => void;
  configPollMs?: number;
  /** --allow-insecure-creds: the credentials may go in plaintext to a cloud that is not loopback. */
  allowInsecureCreds?: boolean;
  /** Runs systemctl, apt, journalctl and reboot for system_configuration and the network. */
  runner: CommandRunner;
  network?: MachineSettingsOptions['network'];
  /** Where the captive portal and the provisioning gRPC service listen while provisioning. */
  provisioning?: MachineSettingsOptions['provisioning'];
}

export class Agent {
  config!: AgentConfig;
  source!: MachineSource;
  readonly supervisor: RuntimeSupervisor;
  readonly cache: BinaryCache;
  readonly machine: MachineSettings;
  private readonly versionControl: VersionControl;
  private gate?: MaintenanceGate;
  private defaultsLayer: Layer = {};
  private configLayer: Layer = {};
  private maintenance?: MaintenanceConfig;
  private cloud?: AgentCloudClient;
  private state: SavedState = {};
  private checkIntervalSeconds = UPDATE_CHECK_SECONDS;
  private timers = new Set<NodeJS.Timeout>();
  private checking?: Promise<boolean>;
  private pendingRestart?: string;
  private pendingExit?: string;
  private gateTimer?: NodeJS.Timeout;
  private lastGateReason?: string;
  private fileStamp = '';
  private runningBinary?: string;
  private stopped = false;
  private lastCheckAt = 0;
  private warnedOffline = false;

  constructor(private readonly opts: AgentOptions) {
    this.cache = new BinaryCache(opts.paths.cacheDir, opts.paths.binDir, opts.logger);
    this.versionControl = new VersionControl(this.cache, opts.logger);
    const onCredentials = () => this.requestExit('machine credentials saved through provisioning');
    this.machine = new MachineSettings({ ...opts, systemRoot: opts.paths.systemRoot, credentialsFile: opts.paths.configFile, onCredentials });
    this.supervisor = new RuntimeSupervisor({
      time: opts.time,
      logger: opts.logger,
      output: opts.output,
      startTimeoutMinutes: () => this.config.advanced_settings.platform_server_start_timeout_minutes,
      launch: async () => {
        const binary = await this.cache.installed('platform-server');
        if (!binary) return undefined;
        this.runningBinary = binary;
        return {
          binary,
          // The runtime reads the same credentials: it gets the same plaintext permission.
          args: ['-config', this.opts.paths.configFile, ...(opts.allowInsecureCreds ? ['-allow-insecure-creds'] : [])],
          env: { ...this.opts.env, ...this.config.advanced_settings.platform_server_env },
        };
      },
    });
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  async start(): Promise<void> {
    const { paths, env } = this.opts;
    this.source = await loadMachineSource(paths.configFile, env);
    if (this.source.mode === 'online' && credentialsFromEnv(env) && !(await exists(paths.configFile))) {
      // platform-server reads the same credentials through -config, so they must be in the file.
      await writeFileDurable(paths.configFile, credentialsFileContent(this.source.credentials), 0o600);
      this.log.info({ file: paths.configFile }, 'wrote machine credentials from the environment');
    }
    try {
      this.defaultsLayer = await readDefaultsLayer(paths.defaultsFile);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'ignoring the manufacturer defaults file');
    }
    this.state = await readState(paths.stateFile);
    if (this.source.mode === 'offline') {
      this.fileStamp = await stampOf(paths.configFile);
      this.configLayer = layerOf(this.source.machineConfig.agent);
      this.setMaintenance(this.source.machineConfig.maintenance);
    } else {
      // gRPC is loaded only when needed: an offline agent stays smaller (see bench:agent-rss).
      const { AgentCloudClient } = await import('./agent-service-client.js');
      this.cloud = new AgentCloudClient(this.source.credentials, this.opts.allowInsecureCreds ?? false);
      this.configLayer = this.state.cloud?.agentConfig ?? {};
      this.setMaintenance(this.state.cloud?.maintenance);
      this.checkIntervalSeconds = this.state.cloud?.checkIntervalSeconds || UPDATE_CHECK_SECONDS;
    }
    this.config = this.computeConfig(this.configLayer) ?? this.computeConfig({})!;
    this.applyLogLevel();
    this.log.info({ version: AGENT_VERSION, mode: this.source.mode, config: paths.configFile }, 'platform-agent starting');
    await this.machine.start(this.config);

    const wait = this.opts.waitForUpdate || (!this.opts.fastStart && this.config.advanced_settings.wait_for_update_check);
    if (wait) {
      this.log.info('waiting for an update check before starting platform-server');
      while (!this.stopped && !(await this.check())) await this.sleep(this.opts.time.seconds(RETRY_SECONDS));
    } else if (!(await this.cache.installed('platform-server'))) {
      // Nothing to run yet: the first check installs it (from a URL, a file or the cloud).
      await this.check();
    } else {
      void this.check();
    }
    if (this.stopped) return;
    if (!this.config.advanced_settings.disable_platform_server) await this.supervisor.start();
    else this.log.info('platform-server is disabled (disable_platform_server)');
    this.schedule();
  }

  /** Stops the runtime (SIGTERM, then kill after the grace period) and all timers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.gateTimer) clearTimeout(this.gateTimer);
    await this.supervisor.stop();
    await this.machine.stop();
    this.cloud?.close();
  }

  /** Re-reads config and versions now (SIGHUP does this too). Resolves true when the check succeeded. */
  check(): Promise<boolean> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.source.mode === 'offline') {
      // A changed file is applied at once; URL versions are re-checked for new content every interval.
      this.after(this.opts.configPollMs ?? CONFIG_POLL_MS, async () => {
        const stamp = await stampOf(this.opts.paths.configFile);
        const due = Date.now() - this.lastCheckAt >= this.opts.time.seconds(this.checkIntervalSeconds);
        if (stamp !== this.fileStamp || due) await this.check();
        this.schedule();
      });
    } else {
      this.after(this.opts.time.seconds(this.checkIntervalSeconds), async () => {
        await this.check();
        this.schedule();
      });
    }
  }

  private after(ms: number, fn: () => Promise<void>): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      void fn().catch((err) => this.log.error({ err: (err as Error).message }, 'agent task failed'));
    }, ms);
    this.timers.add(t);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, async () => resolve()));
  }

  private async checkOnce(): Promise<boolean> {
    this.lastCheckAt = Date.now();
    let updateInfo: Record<string, UpdateInfo> = {};
    this.log.debug({ mode: this.source.mode, interval_seconds: this.checkIntervalSeconds }, 'update check: starting');
    try {
      if (this.source.mode === 'offline') {
        const file = this.opts.paths.configFile;
        this.log.debug({ file }, 'update check: reading the agent config from the machine config file');
        this.fileStamp = await stampOf(file);
        const doc = JSON.parse(await readFile(file, 'utf8')) as unknown;
        const source = machineSourceOf(file, doc);
        if (source.mode !== 'offline') throw new Error(`${file} no longer holds an "agent" object; restart the agent to go online`);
        this.source = source;
        this.applyConfig(layerOf(source.machineConfig.agent), source.machineConfig.maintenance);
      } else {
        const res = await this.askCloud();
        updateInfo = res.updateInfo;
        this.log.debug(
          { update_info: res.updateInfo, errors: res.errors, check_interval_seconds: res.checkIntervalSeconds },
          'update check: the cloud answered',
        );
        this.state = {
          ...this.state,
          cloud: { agentConfig: layerOf(res.agentConfig), maintenance: res.maintenance, checkIntervalSeconds: res.checkIntervalSeconds },
        };
        await writeFileDurable(this.opts.paths.stateFile, JSON.stringify(this.state));
        if (res.checkIntervalSeconds > 0) this.checkIntervalSeconds = res.checkIntervalSeconds;
        for (const [subsystem, error] of Object.entries(res.errors)) this.log.warn({ subsystem, error }, 'the cloud cannot resolve a version');
        this.applyConfig(layerOf(res.agentConfig), res.maintenance);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'update check failed; keeping the current config');
      return false;
    }
    await this.applyVersions(updateInfo);
    return true;
  }

  /** Asks the cloud, and once more if its config names other versions than the ones asked about. */
  private async askCloud(): Promise<DeviceAgentConfigResponse> {
    // The running agent reports its own build; the runtime, the version last installed.
    const versions: Record<string, string> = { ...(this.state.versions ?? {}), agent: AGENT_VERSION };
    let specs = this.config.version_control;
    this.log.debug({ versions, version_control: specs }, 'update check: asking the cloud for the agent config and versions');
    let res = await this.cloud!.deviceAgentConfig(versions, { ...specs });
    const next = this.computeConfig(layerOf(res.agentConfig))?.version_control;
    if (next && !isDeepStrictEqual(next, specs)) {
      this.log.debug({ asked: specs, configured: next }, 'update check: the cloud config names other versions; asking again');
      specs = next;
      res = await this.cloud!.deviceAgentConfig(versions, { ...specs });
    }
    return res;
  }

  private computeConfig(layer: Layer): AgentConfig | undefined {
    try {
      return effectiveAgentConfig([
        { name: `${this.opts.paths.defaultsFile}:agent`, layer: this.defaultsLayer },
        { name: this.source.mode === 'offline' ? `${this.source.file}:agent` : 'cloud:agent', layer },
      ]);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'invalid agent config; keeping the previous one');
      return undefined;
    }
  }

  private setMaintenance(raw: unknown): void {
    const { config, error } = maintenanceConfigOf(raw);
    if (error) this.log.warn(error);
    this.maintenance = config;
  }

  private applyLogLevel(): void {
    this.log.level = this.opts.debug || this.config.advanced_settings.debug ? 'debug' : 'info';
  }

  private applyConfig(layer: Layer, maintenance: unknown): void {
    this.setMaintenance(maintenance);
    const next = this.computeConfig(layer);
    if (!next) return;
    const prev = this.config;
    this.configLayer = layer;
    this.config = next;
    if (isDeepStrictEqual(prev, next)) return;
    this.applyLogLevel();
    this.log.info('agent config changed');
    this.machine.changed(prev, next);
    const wasDisabled = prev.advanced_settings.disable_platform_server;
    const disabled = next.advanced_settings.disable_platform_server;
    if (disabled && !wasDisabled) {
      this.log.info('platform-server disabled; stopping it');
      this.pendingRestart = undefined;
      void this.supervisor.stop();
    } else if (!disabled && wasDisabled) {
      this.log.info('platform-server enabled; starting it');
      void this.supervisor.start();
    } else if (!disabled && !isDeepStrictEqual(prev.advanced_settings.platform_server_env, next.advanced_settings.platform_server_env)) {
      // SPEC.md: of all agent settings, only platform_server_env restarts the runtime.
      this.requestRestart('platform_server_env changed');
    }
  }

  private async applyVersions(updateInfo: Record<string, UpdateInfo>): Promise<void> {
    for (const subsystem of ['platform-server', 'agent'] as const satisfies readonly Subsystem[]) {
      const spec = this.config.version_control[subsystem];
      this.log.debug({ subsystem, spec, installed: this.state.versions?.[subsystem] ?? null, cloud: updateInfo[subsystem] ?? null }, 'version check');
      try {
        const result = await this.versionControl.apply(subsystem, spec, updateInfo[subsystem]);
        this.log.debug(
          { subsystem, spec, result: result ? { version: result.version, file: result.file, changed: result.changed } : null },
          result?.changed ? 'version check: a new binary is installed' : 'version check: the installed binary is current',
        );
        if (!result) {
          if (subsystem === 'platform-server' && this.source.mode === 'offline' && !(await this.cache.installed(subsystem)) && !this.warnedOffline) {
            this.warnedOffline = true;
            this.log.warn({ version: spec }, 'offline, named versions cannot be resolved: set version_control.platform-server to a file:// or http(s):// URL');
          }
          continue;
        }
        if (result.changed || this.state.versions?.[subsystem] !== result.version) {
          this.state.versions = { ...this.state.versions, [subsystem]: result.version };
          await writeFileDurable(this.opts.paths.stateFile, JSON.stringify(this.state));
        }
        if (subsystem === 'platform-server') await this.afterRuntimeInstall(result.file, result.version);
        else if (result.changed) this.requestExit(`agent ${result.version} installed`);
      } catch (err) {
        this.log.error({ subsystem, spec, err: (err as Error).message }, 'version update failed; keeping the installed binary');
      }
    }
  }

  private async afterRuntimeInstall(file: string, version: string): Promise<void> {
    if (this.config.advanced_settings.disable_platform_server) {
      this.log.debug({ version }, 'supervision: platform-server is disabled; not starting the installed version');
      return;
    }
    if (this.supervisor.running && this.runningBinary !== file) {
      this.log.debug(
        { version, running: this.runningBinary, installed: file },
        'supervision: the running binary differs from the installed one; restart requested',
      );
      this.requestRestart(`platform-server ${version} installed`);
    } else if (!this.supervisor.running && this.supervisor.state === 'stopped') {
      this.log.debug({ version }, 'supervision: platform-server is not running; starting the installed version');
      await this.supervisor.poke();
    } else {
      this.log.debug({ version, state: this.supervisor.state }, 'supervision: platform-server already runs the installed version; nothing to do');
    }
  }

  private requestRestart(reason: string): void {
    this.pendingRestart = this.pendingRestart ? `${this.pendingRestart}; ${reason}` : reason;
    void this.tryPending();
  }

  private requestExit(reason: string): void {
    this.pendingExit = reason;
    void this.tryPending();
  }

  /** Carries out a deferred restart or self-update exit once the maintenance window allows it. */
  private async tryPending(): Promise<void> {
    if (this.stopped || (!this.pendingRestart && !this.pendingExit)) return;
    if (this.gateTimer) clearTimeout(this.gateTimer);
    this.gateTimer = undefined;
    const address = this.supervisor.state === 'serving' ? this.supervisor.current?.servingAt : undefined;
    if (this.maintenance && !this.gate) this.gate = new (await import('./maintenance-window.js')).MaintenanceGate();
    const verdict = this.gate ? await this.gate.check(this.maintenance, address) : { allowed: true as const, reason: 'no maintenance window configured' };
    if (this.stopped) return;
    this.log.debug(
      { allowed: verdict.allowed, reason: verdict.reason, pending_restart: this.pendingRestart ?? null, pending_exit: this.pendingExit ?? null },
      'supervision: maintenance window checked',
    );
    if (!verdict.allowed) {
      if (verdict.reason !== this.lastGateReason)
        this.log.info({ reason: verdict.reason, pending: this.pendingExit ?? this.pendingRestart }, 'restart deferred by the maintenance window');
      this.lastGateReason = verdict.reason;
      this.gateTimer = setTimeout(() => void this.tryPending(), this.opts.time.seconds(RETRY_SECONDS));
      return;
    }
    this.lastGateReason = undefined;
    if (this.pendingExit) {
      const reason = this.pendingExit;
      this.log.info({ reason }, 'self-update installed; stopping platform-server and exiting for the service manager to restart the agent');
      await this.stop();
      this.opts.exit(0);
      return;
    }
    const reason = this.pendingRestart!;
    this.pendingRestart = undefined;
    if (this.config.advanced_settings.disable_platform_server) return;
    await this.supervisor.restart(reason);
  }
}
