// platform-micro-server's lifecycle, in one thread: read the config, serve the same gRPC server as
// platform-server (core/grpc/runtime-server.ts), start the resources through the same kernel (Machine,
// with its drivers hosted in this thread), print the `serving` line, follow config changes (gated by the
// maintenance window) and shut down in order. What it leaves out of platform-server's Runtime is what
// a small board does not run: modules, packages, the control page, tracing and metrics.
import type { LoadedConfig } from '../config/config-file.js';
import type { ConfigSource } from '../config/config-source.js';
import { describeChanges, diffConfigs } from '../config/diff.js';
import { redactedConfigText, saveConfigFile, validationErrors } from '../config/config-edit.js';
import { LogRing } from '../logging/log-ring.js';
import type { LogSink } from '../logging/sink.js';
import type * as pb from '../../gen/platform/robot/v1/robot.js';
import { status } from '@grpc/grpc-js';
import { StatusError } from '../serving/status-error.js';
import { InvalidConfigError, type MachineConfig } from '../config/machine-config.js';
import { startRuntimeServer, type RuntimeServer } from '../grpc/runtime-server.js';
import type { WebRtcAnswerer } from '../webrtc/answerer.js';
import type { Machine } from '../kernel/machine.js';
import { checkMaintenance } from '../kernel/maintenance-check.js';
import { OwnLogLevels, type LevelName } from '../config/log-rules.js';
import { actuationOf } from '../session/actuators.js';
import { heartbeatWindowMs } from '../config/session-config.js';
import { Sessions } from '../session/sessions.js';
import { platformVersion } from '../version.js';

/** How often a config held back by the maintenance window is tried again. */
const MAINTENANCE_RETRY_MS = 1000;

export interface MicroRuntimeOptions {
  debug: boolean;
  noTls: boolean;
  revealDiffs: boolean;
  webrtc: boolean;
}

export class MicroRuntime {
  private server?: RuntimeServer;
  private loaded?: LoadedConfig;
  private readonly levels: OwnLogLevels;
  private configError?: string;
  private configErrors: pb.ConfigValidationError[] = [];
  private readonly logs: LogRing;
  private revision = 1;
  private pending?: { revision: number; reason: string; since: Date };
  private maintenanceTimer?: NodeJS.Timeout;
  private stopping?: Promise<void>;
  private reloading: Promise<void> = Promise.resolve();
  private readonly sessions: Sessions;
  private readonly log;
  private onShutdownRequest: () => void = () => undefined;
  /** Called once a saved config has been dealt with; an online machine reports its status then. */
  onConfigSettled?: () => void;

  constructor(
    private readonly machine: Machine,
    private readonly sink: LogSink,
    private readonly file: ConfigSource,
    private readonly options: MicroRuntimeOptions,
  ) {
    this.logs = LogRing.tapping(sink);
    this.levels = new OwnLogLevels(options.debug, () => this.loaded?.config);
    this.log = sink.logger('platform.server', () => this.levelOf('platform.server'));
    this.sessions = new Sessions(
      () => heartbeatWindowMs(this.loaded?.config.session),
      async (name, api) => {
        const remote = this.machine.resource<Record<string, () => Promise<void>>>(name, api);
        await remote[actuationOf(api)!.stop]();
      },
      sink.logger('platform.session', () => this.levelOf('platform.session')),
    );
  }

  levelOf(logger: string): LevelName {
    return this.levels.levelOf(logger);
  }

  /** The WebRTC answerer of the server now serving (it changes when the runtime rebinds); undefined with -webrtc=false. */
  get webrtcAnswerer(): WebRtcAnswerer | undefined {
    return this.server?.answerer;
  }

  get configProblem(): string | undefined {
    return this.configError ?? this.file.problem?.();
  }

  /** Starts everything and returns the address served. Throws InvalidConfigError for a bad config file. */
  async start(onShutdownRequest: () => void): Promise<string> {
    this.loaded = this.file.read();
    this.warnUnsupported(this.loaded.config);
    this.server = await this.serve(this.loaded);
    const initial = this.machine.apply(this.loaded.config);
    this.reloading = initial.catch(() => undefined);
    await Promise.all([initial, this.file.watch(() => void this.reload())]);
    // A save between the first read and the watcher being ready would otherwise go unseen.
    await this.reload();
    const ready = this.machine.statuses().filter((s) => s.state === 'ready').length;
    this.log.info('serving', { address: this.server.address, tls: this.server.tls, resources: this.machine.statuses().length, ready });
    this.onShutdownRequest = onShutdownRequest;
    return this.server.address;
  }

  /** Parts of a valid config that only platform-server acts on: said once per config, never fatal. */
  private warnUnsupported(config: MachineConfig): void {
    if (config.modules.length) {
      this.log.error('modules need platform-server: platform-micro-server loads none; resources of their models are unhealthy', {
        modules: config.modules.map((m) => m.module_id),
      });
    }
    if (config.packages.length) {
      this.log.error('packages need platform-server: platform-micro-server installs none', { packages: config.packages.map((p) => p.name) });
    }
    if (config.tracing?.enabled) this.log.warn('tracing needs platform-server: platform-micro-server records no spans');
  }

  private serve(loaded: LoadedConfig): Promise<RuntimeServer> {
    const { network } = loaded.config;
    const tls =
      !this.options.noTls && network.tls_cert_file && network.tls_key_file ? { certFile: network.tls_cert_file, keyFile: network.tls_key_file } : undefined;
    return startRuntimeServer(
      this.machine,
      {
        version: platformVersion(),
        machineState: () => this.machine.state,
        configError: () => this.configProblem,
        shutdown: () => this.onShutdownRequest(),
        sessions: this.sessions,
        pendingConfig: () => this.pending,
        logs: this.logs,
        config: { view: () => this.configView(), save: (text) => this.saveConfig(text) },
      },
      { bindAddress: network.bind_address, tls, webrtc: this.options.webrtc },
    );
  }

  private configView(): pb.GetConfigResponse {
    const origin = this.file.origin();
    return {
      configJson: this.loaded ? redactedConfigText(this.loaded.raw) : '',
      source: origin.source,
      path: origin.path,
      editHint: origin.editHint ?? '',
      errors: this.configErrors,
      revision: this.revision,
      resourceErrors: validationErrors(new InvalidConfigError(this.machine.configErrors())),
    };
  }

  private async saveConfig(text: string): Promise<pb.SaveConfigResponse> {
    const origin = this.file.origin();
    if (origin.source !== 'file')
      throw new StatusError(status.FAILED_PRECONDITION, `config_json: cannot be saved on this machine: ${origin.editHint ?? origin.source}`);
    if (this.stopping) throw new StatusError(status.UNAVAILABLE, 'the runtime is shutting down');
    const saved = await saveConfigFile(origin.path, text, this.loaded?.raw);
    if (saved.saved) void this.reload();
    return saved;
  }

  /** Reloads one at a time: each reads the config as it is when its turn comes. */
  private reload(): Promise<void> {
    this.reloading = this.reloading
      .then(() => this.reloadNow())
      .catch((err) => this.log.error('reload failed', { error: String(err) }))
      .finally(() => this.onConfigSettled?.());
    return this.reloading;
  }

  private async reloadNow(): Promise<void> {
    clearTimeout(this.maintenanceTimer);
    if (this.stopping) return;
    let next: LoadedConfig;
    try {
      next = this.file.read();
    } catch (err) {
      if (!(err instanceof InvalidConfigError)) throw err;
      this.configError = err.message;
      this.configErrors = validationErrors(err);
      this.pending = undefined;
      this.log.error('the saved config is invalid; still running the previous one', { errors: err.errors.map((e) => e.message) });
      return;
    }
    this.configError = undefined;
    this.configErrors = [];
    const changes = diffConfigs(this.loaded?.raw, next.raw);
    if (changes.length === 0) {
      this.pending = undefined;
      return;
    }
    const maintenance = next.config.maintenance;
    if (maintenance) {
      const verdict = await checkMaintenance(this.machine, maintenance);
      if (!verdict.allowed) {
        if (this.pending?.reason !== verdict.reason) {
          this.log.info('reconfiguration deferred by the maintenance window', { revision: this.revision + 1, reason: verdict.reason });
        }
        this.pending = { revision: this.revision + 1, reason: verdict.reason, since: this.pending?.since ?? new Date() };
        this.maintenanceTimer = setTimeout(() => void this.reload(), MAINTENANCE_RETRY_MS);
        return;
      }
    }
    this.pending = undefined;
    this.revision++;
    this.log.info('config changed', { changes: describeChanges(changes, this.options.revealDiffs) });
    const previous = this.loaded;
    this.loaded = next;
    this.warnUnsupported(next.config);
    if (previous && previous.config.network.bind_address !== next.config.network.bind_address) await this.rebind(next);
    await this.machine.apply(next.config);
    this.log.info('reconfigured', { ready: this.machine.statuses().filter((s) => s.state === 'ready').length, resources: this.machine.statuses().length });
  }

  private async rebind(next: LoadedConfig): Promise<void> {
    const old = this.server;
    try {
      this.server = await this.serve(next);
      this.log.info('serving', { address: this.server.address, tls: this.server.tls });
      await old?.stop();
    } catch (err) {
      this.log.error('cannot serve on the new bind_address; still serving on the old one', { error: (err as Error).message });
    }
  }

  /** Closes resources in reverse dependency order, then the server. Safe to call more than once. */
  shutdown(): Promise<void> {
    this.stopping ??= (async () => {
      clearTimeout(this.maintenanceTimer);
      this.log.info('shutting down');
      this.sessions.close();
      await this.file.close();
      await this.machine.shutdown();
      this.logs.close();
      await this.server?.stop();
      this.log.info('stopped');
      await this.sink.close();
    })();
    return this.stopping;
  }
}
