// platform-server's lifecycle: load the config, serve gRPC, start the resources, print the `serving`
// line, follow config changes (core/server/config-reloader.ts, gated by the maintenance window), and shut
// down in order. The sessions, the packages and the reloader are composed in core/server/compose.ts.
import { inject, injectable, type InjectionToken } from 'tsyringe';
import type { LoadedConfig } from '../config/config-file.js';
import { LogRing } from '../logging/log-ring.js';
import type { RuntimeServer } from '../grpc/runtime-server.js';
import { moveServer, serveMachine } from './serve-machine.js';
import type { WebRtcAnswerer } from '../webrtc/answerer.js';
import { Machine } from '../kernel/machine.js';
import { LOG_SINK, type LogSink } from '../logging/sink.js';
import type { LevelName } from '../config/log-rules.js';
import { ConfigReloader } from './config-reloader.js';
import { PackageChecks } from './package-checks.js';
import { ModuleHost } from '../modules/module-host.js';
import { setModuleActuations } from '../session/actuators.js';
import { moduleActuation } from '../grpc/module-apis.js';
import { Sessions } from '../session/sessions.js';
import { observeMachine } from '../kernel/machine-metrics.js';
import { startMachineTracing, type MachineTracing } from './machine-tracing.js';
import { startRuntimeWeb } from '../web/runtime-web.js';
import type { WebServer } from '../serving/web/web-server.js';
import { flag, pendingFlags, stringFlag, type Flags } from './flags.js';

export const RUNTIME_FLAGS: InjectionToken<Flags> = 'RuntimeFlags';

@injectable()
export class Runtime {
  private server?: RuntimeServer;
  /** The control page's web port (core/web/README.md), forwarding to `server`. */
  private web?: WebServer;
  /** The recent log lines and their live followers (StreamLogs; the control page's live logs). */
  private readonly logs: LogRing;
  private stopping?: Promise<void>;
  private readonly log;
  /** Removes the machine's metric sources (sessions, data managers) at shutdown. */
  private readonly unobserve: () => void;
  private tracing?: MachineTracing;

  constructor(
    @inject(Machine) private readonly machine: Machine,
    @inject(LOG_SINK) private readonly sink: LogSink,
    @inject(RUNTIME_FLAGS) private readonly flags: Flags,
    @inject(ConfigReloader) private readonly reloader: ConfigReloader,
    /** Outlives a rebind of the server: clients keep their sessions when bind_address changes. */
    @inject(Sessions) private readonly sessions: Sessions,
    @inject(ModuleHost) private readonly modules: ModuleHost,
    /** The config's packages (core/packages/), installed and pruned around each config the machine applies. */
    @inject(PackageChecks) private readonly packages: PackageChecks,
  ) {
    this.logs = LogRing.tapping(sink);
    this.log = sink.logger('platform.server', () => this.levelOf('platform.server'));
    this.unobserve = observeMachine(machine, this.sessions);
  }

  /**
   * The level of one of the runtime's own loggers (platform.server, platform.session, platform.ftdc).
   * (The stdout line `platform-server serving on ...` that the agent waits for is not a log line.)
   */
  levelOf(logger: string): LevelName {
    return this.reloader.levelOf(logger);
  }

  /** Starts everything and returns the address served. Throws InvalidConfigError for a bad config file. */
  async start(onShutdownRequest: () => void): Promise<string> {
    // Before any await: main.ts relies on the config being loaded as soon as start() returns its promise.
    const loaded = this.reloader.read();
    for (const name of pendingFlags(this.flags)) this.log.warn(`-${name} is accepted but not supported yet in this version; it has no effect`);
    if (loaded.config.cloud && !this.reloader.source.problem) {
      this.log.warn(
        'the config holds cloud credentials and a local machine config: it runs the local config (a file with only cloud credentials, and network, fetches its config from the cloud)',
      );
    }
    // Before the server: every call is traced when the config's `tracing` section turns it on.
    this.tracing = await startMachineTracing(loaded.config.tracing, flag(this.flags, 'output-telemetry'));
    this.server = await this.serve(loaded);
    this.modules.onApis((apis) => this.serveModuleApis(apis));
    try {
      this.web = await startRuntimeWeb({
        network: loaded.config.network,
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
    // Modules, then packages, then the machine (the order is composed in core/server/compose.ts).
    await this.reloader.start();
    const ready = this.machine.statuses().filter((s) => s.state === 'ready').length;
    this.log.info('serving', { address: this.server.address, tls: this.server.tls, resources: this.machine.statuses().length, ready });
    this.onShutdownRequest = onShutdownRequest;
    return this.server.address;
  }

  private onShutdownRequest: () => void = () => undefined;

  /** Why the newest config is not running: invalid, or none to be had (GetMachineStatus.config_error). */
  get configProblem(): string | undefined {
    return this.reloader.problem;
  }

  /** The config running now (after the first read). */
  get config(): LoadedConfig | undefined {
    return this.reloader.loaded;
  }

  /** Called once a saved config has been dealt with (ConfigReloader.onConfigSettled). */
  set onConfigSettled(settled: (() => void) | undefined) {
    this.reloader.onConfigSettled = settled;
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
    return serveMachine(loaded, {
      machine: this.machine,
      reloader: this.reloader,
      sessions: this.sessions,
      logs: this.logs,
      shutdown: () => this.onShutdownRequest(),
      noTls: flag(this.flags, 'no-tls'),
      webrtc: flag(this.flags, 'webrtc'),
    });
  }

  /** A config change that moves bind_address serves on the new address first (the reloader's configPreparation point). */
  async followBindAddress(next: LoadedConfig, previous: LoadedConfig | undefined): Promise<void> {
    if (!previous || previous.config.network.bind_address === next.config.network.bind_address) return;
    const serve = async () => {
      const server = await this.serve(next);
      server.serveModuleApis(this.modules.apis());
      return server;
    };
    await moveServer(this.server, serve, (server) => (this.server = server), this.log);
  }

  /** Closes resources in reverse dependency order, then the server. Safe to call more than once. */
  shutdown(): Promise<void> {
    this.stopping ??= (async () => {
      this.reloader.stop();
      this.packages.stop();
      this.log.info('shutting down');
      this.sessions.close();
      this.unobserve();
      await this.reloader.close();
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
