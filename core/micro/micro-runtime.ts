// platform-micro-server's lifecycle, in one thread: read the config, serve the same gRPC server as
// platform-server (core/grpc/runtime-server.ts), start the resources through the same kernel (Machine,
// with its drivers hosted in this thread), print the `serving` line, follow config changes (gated by the
// maintenance window) and shut down in order. What it leaves out of platform-server's Runtime is what
// a small board does not run: modules, packages, the control page, tracing and metrics.
import type { LoadedConfig } from '../config/config-file.js';
import { LogRing } from '../logging/log-ring.js';
import type { LogSink } from '../logging/sink.js';
import type { MachineConfig } from '../config/machine-config.js';
import type { RuntimeServer } from '../grpc/runtime-server.js';
import { moveServer, serveMachine } from '../server/serve-machine.js';
import type { WebRtcAnswerer } from '../webrtc/answerer.js';
import type { Machine } from '../kernel/machine.js';
import type { LevelName } from '../config/log-rules.js';
import type { ConfigReloader } from '../server/config-reloader.js';
import type { Sessions } from '../session/sessions.js';

export interface MicroRuntimeOptions {
  noTls: boolean;
  webrtc: boolean;
}

export class MicroRuntime {
  private server?: RuntimeServer;
  private readonly logs: LogRing;
  private stopping?: Promise<void>;
  private readonly log;
  private onShutdownRequest: () => void = () => undefined;

  constructor(
    private readonly machine: Machine,
    private readonly sink: LogSink,
    private readonly reloader: ConfigReloader,
    private readonly sessions: Sessions,
    private readonly options: MicroRuntimeOptions,
  ) {
    this.logs = LogRing.tapping(sink);
    this.log = sink.logger('platform.server', () => this.levelOf('platform.server'));
  }

  levelOf(logger: string): LevelName {
    return this.reloader.levelOf(logger);
  }

  /** The WebRTC answerer of the server now serving (it changes when the runtime rebinds); undefined with -webrtc=false. */
  get webrtcAnswerer(): WebRtcAnswerer | undefined {
    return this.server?.answerer;
  }

  get configProblem(): string | undefined {
    return this.reloader.problem;
  }

  /** Called once a saved config has been dealt with; an online machine reports its status then. */
  set onConfigSettled(settled: (() => void) | undefined) {
    this.reloader.onConfigSettled = settled;
  }

  /** Starts everything and returns the address served. Throws InvalidConfigError for a bad config file. */
  async start(onShutdownRequest: () => void): Promise<string> {
    const loaded = this.reloader.read();
    this.warnUnsupported(loaded.config);
    this.server = await this.serve(loaded);
    await this.reloader.start();
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
    return serveMachine(loaded, {
      machine: this.machine,
      reloader: this.reloader,
      sessions: this.sessions,
      logs: this.logs,
      shutdown: () => this.onShutdownRequest(),
      ...this.options,
    });
  }

  /**
   * A changed config (the reloader's configPreparation point, core/micro/compose.ts): said what of it
   * this server leaves out, and served on a moved bind_address, before the machine applies it.
   */
  async followChange(next: LoadedConfig, previous: LoadedConfig | undefined): Promise<void> {
    if (!previous) return;
    this.warnUnsupported(next.config);
    if (previous.config.network.bind_address === next.config.network.bind_address) return;
    await moveServer(
      this.server,
      () => this.serve(next),
      (server) => (this.server = server),
      this.log,
    );
  }

  /** Closes resources in reverse dependency order, then the server. Safe to call more than once. */
  shutdown(): Promise<void> {
    this.stopping ??= (async () => {
      this.reloader.stop();
      this.log.info('shutting down');
      this.sessions.close();
      await this.reloader.close();
      await this.machine.shutdown();
      this.logs.close();
      await this.server?.stop();
      this.log.info('stopped');
      await this.sink.close();
    })();
    return this.stopping;
  }
}
