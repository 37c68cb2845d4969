// platform-server's lifecycle: load the config, serve gRPC, start the resources, print the `serving`
// line, follow config changes (gated by the maintenance window), and shut down in order.
import { inject, injectable, type InjectionToken } from 'tsyringe';
import type { LoadedConfig } from '../config/config-file.js';
import type { ConfigSource } from '../config/config-source.js';
import { describeChanges, diffConfigs } from '../config/diff.js';
import { redactedConfigText, saveConfigFile, validationErrors } from '../config/config-edit.js';
import { LogRing } from '../logging/log-ring.js';
import type * as pb from '../../gen/platform/robot/v1/robot.js';
import { StatusError } from '../serving/status-error.js';
import { status } from '@grpc/grpc-js';
import { InvalidConfigError, type Maintenance } from '../config/machine-config.js';
import { startRuntimeServer, type RuntimeServer } from '../grpc/runtime-server.js';
import type { WebRtcAnswerer } from '../webrtc/answerer.js';
import { Machine } from '../kernel/machine.js';
import { checkMaintenance } from '../kernel/maintenance-check.js';
import { OwnLogLevels, type LevelName } from '../config/log-rules.js';
import { LOG_SINK, type LogSink } from '../logging/sink.js';
import { ModuleHost } from '../modules/module-host.js';
import { MachinePackages } from '../packages/machine-packages.js';
import { PackageStore } from '../packages/package-store.js';
import { actuationOf, setModuleActuations } from '../session/actuators.js';
import { moduleActuation } from '../grpc/module-apis.js';
import { heartbeatWindowMs } from '../config/session-config.js';
import { Sessions } from '../session/sessions.js';
import { observeMachine } from '../kernel/machine-metrics.js';
import { startMachineTracing, type MachineTracing } from './machine-tracing.js';
import { platformVersion } from '../version.js';
import { startRuntimeWeb } from '../web/runtime-web.js';
import type { WebServer } from '../serving/web/web-server.js';
import { flag, pendingFlags, stringFlag, type Flags } from './flags.js';
import { envNumber } from '../serving/env.js';
import type { ResourceEntry } from '../config/resource-entry.js';

export const RUNTIME_FLAGS: InjectionToken<Flags> = 'RuntimeFlags';
/** The local config file, or the cloud for an online machine. */
export const CONFIG_FILE: InjectionToken<ConfigSource> = 'ConfigFile';

/** How often a config held back by the maintenance window is tried again. */
const MAINTENANCE_RETRY_MS = 1000;
/** How often packages that could not be downloaded (the cloud unreachable) are tried again. */
const PACKAGES_RETRY_MS = envNumber('PLATFORM_PACKAGES_RETRY_MS', 10_000, 100)!;
/** How often a config with a package at "latest" asks the cloud for a newer version (at least 1 s: each check is a call per package). */
const PACKAGES_LATEST_MS = envNumber('PLATFORM_PACKAGES_LATEST_MS', 60_000, 1000)!;

@injectable()
export class Runtime {
  private server?: RuntimeServer;
  /** The control page's web port (core/web/README.md), forwarding to `server`. */
  private web?: WebServer;
  private loaded?: LoadedConfig;
  private configError?: string;
  /** The rejected saved config's errors, each with its path and rule (GetConfig). */
  private configErrors: pb.ConfigValidationError[] = [];
  /** The recent log lines and their live followers (StreamLogs; the control page's live logs). */
  private readonly logs: LogRing;
  /** Revision of the running config: 1 at start, +1 for each change applied. */
  private revision = 1;
  /** A valid saved config that the maintenance window holds back (GetMachineStatus shows it). */
  private pending?: { revision: number; reason: string; since: Date };
  private maintenanceTimer?: NodeJS.Timeout;
  private packagesTimer?: NodeJS.Timeout;
  /** Why the maintenance window holds back the package checks, while it does (logged when it changes). */
  private packagesDeferred?: string;
  private stopping?: Promise<void>;
  private readonly log;
  /** Outlives a rebind of the server: clients keep their sessions when bind_address changes. */
  private readonly sessions: Sessions;
  /** The config's packages: installed before the resources that use them are built (core/packages/). */
  private readonly packages: MachinePackages;
  /** Removes the machine's metric sources (sessions, data managers) at shutdown. */
  private readonly unobserve: () => void;
  private tracing?: MachineTracing;

  constructor(
    @inject(Machine) private readonly machine: Machine,
    @inject(LOG_SINK) private readonly sink: LogSink,
    @inject(RUNTIME_FLAGS) private readonly flags: Flags,
    @inject(CONFIG_FILE) private readonly file: ConfigSource,
    @inject(ModuleHost) private readonly modules: ModuleHost,
  ) {
    this.logs = LogRing.tapping(sink);
    this.levels = new OwnLogLevels(flag(flags, 'debug'), () => this.loaded?.config);
    this.log = sink.logger('platform.server', () => this.levelOf('platform.server'));
    this.sessions = new Sessions(
      () => heartbeatWindowMs(this.loaded?.config.session),
      async (name, api) => {
        const remote = this.machine.resource<Record<string, () => Promise<void>>>(name, api);
        await remote[actuationOf(api)!.stop]();
      },
      sink.logger('platform.session', () => this.levelOf('platform.session')),
    );
    this.packages = new MachinePackages(
      new PackageStore(),
      sink.logger('platform.packages', () => this.levelOf('platform.packages')),
      flag(flags, 'allow-insecure-creds'),
    );
    this.unobserve = observeMachine(machine, this.sessions);
  }

  /** Substitutes the installed packages' folders into the entries (the kernel's entrySubstitution point). */
  prepareEntries(entries: ResourceEntry[]): void {
    this.packages.prepare(entries);
  }

  private readonly levels: OwnLogLevels;

  /**
   * The level of one of the runtime's own loggers (platform.server, platform.session, platform.ftdc).
   * (The stdout line `platform-server serving on ...` that the agent waits for is not a log line.)
   */
  levelOf(logger: string): LevelName {
    return this.levels.levelOf(logger);
  }

  /** Starts everything and returns the address served. Throws InvalidConfigError for a bad config file. */
  async start(onShutdownRequest: () => void): Promise<string> {
    // Before any await: main.ts relies on the config being loaded as soon as start() returns its promise.
    this.loaded = this.file.read();
    for (const name of pendingFlags(this.flags)) this.log.warn(`-${name} is accepted but not supported yet in this version; it has no effect`);
    if (this.loaded.config.cloud && !this.file.problem) {
      this.log.warn(
        'the config holds cloud credentials and a local machine config: it runs the local config (a file with only cloud credentials, and network, fetches its config from the cloud)',
      );
    }
    // Before the server: every call is traced when the config's `tracing` section turns it on.
    this.tracing = await startMachineTracing(this.loaded.config.tracing, flag(this.flags, 'output-telemetry'));
    this.server = await this.serve(this.loaded);
    this.modules.onApis((apis) => this.serveModuleApis(apis));
    try {
      this.web = await startRuntimeWeb({
        network: this.loaded.config.network,
        grpc: () => ({ address: this.server!.address, tls: this.server!.tls }),
        shareddir: stringFlag(this.flags, 'shareddir'),
        webprofile: flag(this.flags, 'webprofile'),
        onError: (message, error) => this.log.error(message, { error: String(error) }),
      });
      this.log.info('web page', { url: this.web.url });
    } catch (err) {
      // The machine's gRPC service matters more than its page: a taken web port does not stop the runtime.
      this.log.error('no web page: its port cannot be bound; set network.web_bind_address to a free host:port', { error: (err as Error).message });
    }
    const config = this.loaded.config;
    const initial = (async () => {
      // Modules first: their models must be registered before the resources that use them are resolved.
      await this.modules.apply(config);
      await this.packages.install(config);
      await this.machine.apply(config);
      await this.packages.prune();
      this.checkPackagesLater();
    })();
    // The watcher gets ready while the resources start; a save it reports meanwhile queues behind them.
    this.reloading = initial.catch(() => undefined);
    await Promise.all([initial, this.file.watch(() => void this.reload())]);
    // A save between the first read and the watcher being ready would otherwise go unseen.
    await this.reload();
    const ready = this.machine.statuses().filter((s) => s.state === 'ready').length;
    this.log.info('serving', { address: this.server.address, tls: this.server.tls, resources: this.machine.statuses().length, ready });
    this.onShutdownRequest = onShutdownRequest;
    return this.server.address;
  }

  private onShutdownRequest: () => void = () => undefined;

  /** Why the newest config is not running: invalid, or none to be had (GetMachineStatus.config_error). */
  get configProblem(): string | undefined {
    return this.configError ?? this.file.problem?.();
  }

  /** The config running now (after the first read). */
  get config(): LoadedConfig | undefined {
    return this.loaded;
  }

  /** Module-defined APIs (core/grpc/module-apis.ts) follow the loaded modules. */
  private serveModuleApis(apis: ReturnType<ModuleHost['apis']>): void {
    setModuleActuations(new Map(apis.flatMap((a) => (moduleActuation(a) ? [[a.api, moduleActuation(a)!] as const] : []))));
    for (const error of this.server?.serveModuleApis(apis) ?? []) this.log.error(`module API not served: ${error.message}`);
    if (apis.length) this.log.info('module APIs served', { services: apis.map((a) => a.service) });
  }

  /** The gRPC server's host:port (follows a rebind), once start() has bound it. */
  get address(): string | undefined {
    return this.server?.address;
  }

  /** Answers WebRTC offers for the server now serving (undefined with -webrtc=false or before start). */
  get webrtcAnswerer(): WebRtcAnswerer | undefined {
    return this.server?.answerer;
  }

  /** The control page's http:// address, once start() has bound it. */
  get webUrl(): string | undefined {
    return this.web?.url;
  }

  private serve(loaded: LoadedConfig): Promise<RuntimeServer> {
    const { network } = loaded.config;
    const tls =
      !flag(this.flags, 'no-tls') && network.tls_cert_file && network.tls_key_file
        ? { certFile: network.tls_cert_file, keyFile: network.tls_key_file }
        : undefined;
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
      { bindAddress: network.bind_address, tls, webrtc: flag(this.flags, 'webrtc') },
    );
  }

  /** GetConfig: the running config (secrets hidden), where it comes from, and a rejected save's errors. */
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

  /**
   * SaveConfig: only a machine run from a local file saves here. A saved config is reloaded at once (the
   * file watcher sees the save too, and a reload of an unchanged file changes nothing): an acknowledged
   * save never waits on the watcher.
   */
  private async saveConfig(text: string): Promise<pb.SaveConfigResponse> {
    const origin = this.file.origin();
    if (origin.source !== 'file')
      throw new StatusError(status.FAILED_PRECONDITION, `config_json: cannot be saved on this machine: ${origin.editHint ?? origin.source}`);
    if (this.stopping) throw new StatusError(status.UNAVAILABLE, 'the runtime is shutting down');
    const saved = await saveConfigFile(origin.path, text, this.loaded?.raw);
    if (saved.saved) void this.reload();
    return saved;
  }

  private reloading: Promise<void> = Promise.resolve();

  /**
   * Called once a saved config has been dealt with (applied, refused, unchanged or deferred): an online
   * machine reports its status then, so the cloud does not show the old revision until the next report.
   */
  onConfigSettled?: () => void;

  /** Reloads one at a time: each reads the file as it is when its turn comes. */
  private reload(): Promise<void> {
    this.reloading = this.reloading
      .then(() => this.reloadNow())
      .catch((err) => this.log.error('reload failed', { error: String(err) }))
      .finally(() => this.onConfigSettled?.());
    return this.reloading;
  }

  /** A saved config change: validate, wait for the maintenance window, then reconfigure. */
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
        // Logged when the wait begins or its reason changes, not at every retry.
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
    this.log.info('config changed', { changes: describeChanges(changes, flag(this.flags, 'reveal-sensitive-config-diffs')) });
    const previous = this.loaded;
    this.loaded = next;
    if (previous && previous.config.network.bind_address !== next.config.network.bind_address) await this.rebind(next);
    await this.modules.apply(next.config);
    // The running resources keep the installed versions while the new ones download.
    await this.packages.install(next.config);
    await this.machine.apply(next.config);
    await this.packages.prune();
    this.checkPackagesLater();
    this.log.info('reconfigured', { ready: this.machine.statuses().filter((s) => s.state === 'ready').length, resources: this.machine.statuses().length });
  }

  /**
   * Installs the running config's packages again while the config stays the same: a package the cloud
   * could not be asked for (an online machine that started offline, a cloud that was down) is retried
   * after PACKAGES_RETRY_MS, and a config that follows "latest" asks the cloud for a newer version every
   * PACKAGES_LATEST_MS (a model trained again). One timer serves both: the sooner is due. A changed folder
   * rebuilds the resources that use it, in the order of a config change (install, reconfigure, prune), so
   * the running version keeps running until the new one is ready; a check that cannot reach the cloud
   * keeps what is installed. Runs in the reload queue, so it never interleaves with a reconfiguration,
   * and waits for the maintenance window as a config change does.
   */
  private checkPackagesLater(): void {
    clearTimeout(this.packagesTimer);
    const delay = this.packages.nextCheckMs({ retryMs: PACKAGES_RETRY_MS, latestMs: PACKAGES_LATEST_MS });
    if (delay === undefined || this.stopping) return;
    this.packagesTimer = setTimeout(() => {
      this.reloading = this.reloading
        .then(async () => {
          const config = this.loaded?.config;
          if (!config || this.stopping) return;
          if (config.maintenance && !(await this.packagesAllowed(config.maintenance))) return;
          if (await this.packages.install(config)) {
            await this.machine.refresh();
            await this.packages.prune();
          }
        })
        .catch((err) => this.log.error('package check failed', { error: String(err) }))
        // A failed check does not end the checks: the next one is scheduled from the config running now.
        .finally(() => this.checkPackagesLater());
    }, delay);
    this.packagesTimer.unref();
  }

  /**
   * A new package version rebuilds resources, so the maintenance window gates it as it gates a config
   * change: while the sensor says no, nothing is downloaded or rebuilt and the next check asks again.
   * The wait is logged when it begins or its reason changes; each deferred check only at debug level.
   */
  private async packagesAllowed(maintenance: Maintenance): Promise<boolean> {
    const verdict = await checkMaintenance(this.machine, maintenance);
    if (verdict.allowed) {
      this.packagesDeferred = undefined;
      return true;
    }
    if (this.packagesDeferred !== verdict.reason) this.log.info('package check deferred by the maintenance window', { reason: verdict.reason });
    else this.log.debug('package check deferred by the maintenance window', { reason: verdict.reason });
    this.packagesDeferred = verdict.reason;
    return false;
  }

  private async rebind(next: LoadedConfig): Promise<void> {
    const old = this.server;
    try {
      this.server = await this.serve(next);
      this.server.serveModuleApis(this.modules.apis());
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
      clearTimeout(this.packagesTimer);
      this.log.info('shutting down');
      this.sessions.close();
      this.unobserve();
      await this.file.close();
      await this.modules.close();
      await this.machine.shutdown();
      this.packages.close();
      // Live log streams end here, so that the server's shutdown does not wait for them.
      this.logs.close();
      await this.web?.stop();
      await this.server?.stop();
      this.log.info('stopped');
      await this.tracing?.shutdown();
      await this.sink.close();
    })();
    return this.stopping;
  }
}
