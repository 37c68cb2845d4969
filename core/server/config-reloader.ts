// The running config and its reloads, one implementation for platform-server and platform-micro-server:
// the first read, the saved changes that follow (one at a time, each reading the config as it is when
// its turn comes), the maintenance window that may hold a change back, GetConfig's view and SaveConfig.
// What a runtime does with a change besides the machine applying it (serving on a new bind_address,
// loading modules, installing packages) it provides at two declared points, wired in its composition
// root (core/server/compose.ts, core/micro/compose.ts): the reloader never calls up into a runtime.
import { status } from '@grpc/grpc-js';
import type * as pb from '../../gen/platform/robot/v1/robot.js';
import type { DriverLogger } from '../../plugins/driver.js';
import type { LoadedConfig } from '../config/config-file.js';
import type { ConfigSource } from '../config/config-source.js';
import { redactedConfigText, saveConfigFile, validationErrors } from '../config/config-edit.js';
import { describeChanges, diffConfigs } from '../config/diff.js';
import { OwnLogLevels, type LevelName } from '../config/log-rules.js';
import { InvalidConfigError, type MachineConfig } from '../config/machine-config.js';
import { createExtensionPoint, type KernelExtensions } from '../kernel/extension-points.js';
import type { Machine } from '../kernel/machine.js';
import { checkMaintenance } from '../kernel/maintenance-check.js';
import type { LogSink } from '../logging/sink.js';
import { StatusError } from '../serving/status-error.js';

/** How often a config held back by the maintenance window is tried again. */
const MAINTENANCE_RETRY_MS = 1000;

/**
 * Before the machine applies a config, in the order provided: at start (`previous` undefined) and at each
 * change. platform-server serves on a changed bind_address, loads modules and installs packages here.
 */
export const configPreparation =
  createExtensionPoint<(next: LoadedConfig, previous: LoadedConfig | undefined) => Promise<unknown> | void>('runtime.config.preparation');

/** After the machine applied a config, in the order provided (platform-server prunes and re-checks packages). */
export const configSettlement = createExtensionPoint<(config: MachineConfig) => Promise<unknown> | void>('runtime.config.settlement');

export interface ConfigReloaderOptions {
  /** -debug: every own logger at debug. */
  debug: boolean;
  /** -reveal-sensitive-config-diffs. */
  revealDiffs: boolean;
}

export class ConfigReloader {
  private current?: LoadedConfig;
  private configError?: string;
  /** The rejected saved config's errors, each with its path and rule (GetConfig). */
  private configErrors: pb.ConfigValidationError[] = [];
  /** Revision of the running config: 1 at start, +1 for each change applied. */
  private revision = 1;
  /** A valid saved config that the maintenance window holds back (GetMachineStatus shows it). */
  private held?: { revision: number; reason: string; since: Date };
  private maintenanceTimer?: NodeJS.Timeout;
  private reloading: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly levels: OwnLogLevels;
  private readonly log: DriverLogger;
  /**
   * Called once a saved config has been dealt with (applied, refused, unchanged or deferred): an online
   * machine reports its status then, so the cloud does not show the old revision until the next report.
   */
  onConfigSettled?: () => void;

  constructor(
    private readonly file: ConfigSource,
    private readonly machine: Machine,
    sink: LogSink,
    private readonly extensions: KernelExtensions,
    private readonly options: ConfigReloaderOptions,
  ) {
    this.levels = new OwnLogLevels(options.debug, () => this.current?.config);
    this.log = sink.logger('platform.server', () => this.levelOf('platform.server'));
  }

  /** The level of one of the runtime's own loggers (platform.server, platform.session, ...), from the running config. */
  levelOf(logger: string): LevelName {
    return this.levels.levelOf(logger);
  }

  /** Where the config comes from: the local file, or the cloud for an online machine. */
  get source(): ConfigSource {
    return this.file;
  }

  /** The config running now (after the first read). */
  get loaded(): LoadedConfig | undefined {
    return this.current;
  }

  /** Why the newest config is not running: invalid, or none to be had (GetMachineStatus.config_error). */
  get problem(): string | undefined {
    return this.configError ?? this.file.problem?.();
  }

  /** The saved config the maintenance window holds back, if any. */
  get pending(): { revision: number; reason: string; since: Date } | undefined {
    return this.held;
  }

  get stopping(): boolean {
    return this.closed;
  }

  /** The first read. Throws InvalidConfigError for a bad config file. */
  read(): LoadedConfig {
    this.current = this.file.read();
    return this.current;
  }

  /**
   * Applies the first config, then follows changes: the watcher gets ready while the resources start; a
   * save it reports meanwhile queues behind them.
   */
  async start(): Promise<void> {
    const config = this.current!;
    const initial = this.apply(config, undefined);
    this.reloading = initial.catch(() => undefined);
    await Promise.all([initial, this.file.watch(() => void this.reload())]);
    // A save between the first read and the watcher being ready would otherwise go unseen.
    await this.reload();
  }

  /** Runs `task` in the reload queue, so that it never interleaves with a reconfiguration. */
  enqueue(task: () => Promise<void>): void {
    this.reloading = this.reloading.then(task);
  }

  /** GetConfig: the running config (secrets hidden), where it comes from, and a rejected save's errors. */
  view(): pb.GetConfigResponse {
    const origin = this.file.origin();
    return {
      configJson: this.current ? redactedConfigText(this.current.raw) : '',
      source: origin.source,
      path: origin.path,
      editHint: origin.editHint ?? '',
      errors: this.configErrors,
      revision: this.revision,
      resourceErrors: validationErrors(new InvalidConfigError(this.machine.configErrors())),
    };
  }

  /**
   * SaveConfig: only a machine run from a local file saves here. A saved config is reloaded at once (the
   * file watcher sees the save too, and a reload of an unchanged file changes nothing): an acknowledged
   * save never waits on the watcher.
   */
  async save(text: string): Promise<pb.SaveConfigResponse> {
    const origin = this.file.origin();
    if (origin.source !== 'file')
      throw new StatusError(status.FAILED_PRECONDITION, `config_json: cannot be saved on this machine: ${origin.editHint ?? origin.source}`);
    if (this.closed) throw new StatusError(status.UNAVAILABLE, 'the runtime is shutting down');
    const saved = await saveConfigFile(origin.path, text, this.current?.raw);
    if (saved.saved) void this.reload();
    return saved;
  }

  /** Shutdown begins: no more reloads or maintenance retries, and saves are refused (UNAVAILABLE). */
  stop(): void {
    this.closed = true;
    clearTimeout(this.maintenanceTimer);
  }

  /** Stops, then closes the config source (its watcher, or the link that fetches it). */
  async close(): Promise<void> {
    this.stop();
    await this.file.close();
  }

  /** Reloads one at a time: each reads the config as it is when its turn comes. */
  reload(): Promise<void> {
    this.reloading = this.reloading
      .then(() => this.reloadNow())
      .catch((err) => this.log.error('reload failed', { error: String(err) }))
      .finally(() => this.onConfigSettled?.());
    return this.reloading;
  }

  /** What the runtime provided, then the machine, then what follows it. */
  private async apply(next: LoadedConfig, previous: LoadedConfig | undefined): Promise<void> {
    for (const prepare of this.extensions.all(configPreparation)) await prepare(next, previous);
    await this.machine.apply(next.config);
    for (const settle of this.extensions.all(configSettlement)) await settle(next.config);
  }

  /** A saved config change: validate, wait for the maintenance window, then reconfigure. */
  private async reloadNow(): Promise<void> {
    clearTimeout(this.maintenanceTimer);
    if (this.closed) return;
    let next: LoadedConfig;
    try {
      next = this.file.read();
    } catch (err) {
      if (!(err instanceof InvalidConfigError)) throw err;
      this.configError = err.message;
      this.configErrors = validationErrors(err);
      this.held = undefined;
      this.log.error('the saved config is invalid; still running the previous one', { errors: err.errors.map((e) => e.message) });
      return;
    }
    this.configError = undefined;
    this.configErrors = [];
    const changes = diffConfigs(this.current?.raw, next.raw);
    if (changes.length === 0) {
      this.held = undefined;
      return;
    }
    const maintenance = next.config.maintenance;
    if (maintenance) {
      const verdict = await checkMaintenance(this.machine, maintenance);
      if (!verdict.allowed) {
        // Logged when the wait begins or its reason changes, not at every retry.
        if (this.held?.reason !== verdict.reason) {
          this.log.info('reconfiguration deferred by the maintenance window', { revision: this.revision + 1, reason: verdict.reason });
        }
        this.held = { revision: this.revision + 1, reason: verdict.reason, since: this.held?.since ?? new Date() };
        this.maintenanceTimer = setTimeout(() => void this.reload(), MAINTENANCE_RETRY_MS);
        return;
      }
    }
    this.held = undefined;
    this.revision++;
    this.log.info('config changed', { changes: describeChanges(changes, this.options.revealDiffs) });
    const previous = this.current;
    this.current = next;
    await this.apply(next, previous);
    this.log.info('reconfigured', { ready: this.machine.statuses().filter((s) => s.state === 'ready').length, resources: this.machine.statuses().length });
  }
}
