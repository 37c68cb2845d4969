// Wires platform-micro-server: the same kernel (Machine) as platform-server, composed with the
// micro-server's models and with every driver hosted in the main thread. No DI container: there are
// five parts, built in this order.
import { ConfigFile } from '../config/config-file.js';
import type { ConfigSource } from '../config/config-source.js';
import { Machine } from '../kernel/machine.js';
import { entryCompletion, entrySubstitution, KernelExtensions, missingModelExplanation } from '../kernel/extension-points.js';
import { defaultKernelOptions } from '../kernel/options.js';
import { linkSettingsOf } from '../cloud-link/link-settings.js';
import { assembleDataManager } from '../resource/data-manager-assemble.js';
import { DATA_MANAGER_API } from '../config/data-manager-attributes.js';
import { envNumber } from '../serving/env.js';
import { LogSink } from '../logging/sink.js';
import { OnlineMachine } from '../online/online-machine.js';
import { explainMissingModel, microDriver, microRegistry } from './micro-models.js';
import { InProcessHosting } from './in-process-hosting.js';
import { MicroRuntime } from './micro-runtime.js';
import { ConfigReloader, configPreparation } from '../server/config-reloader.js';
import { machineSessions } from '../session/machine-sessions.js';

export interface MicroOptions {
  configPath: string;
  logFile?: string;
  debug: boolean;
  noTls: boolean;
  allowInsecureCreds: boolean;
  revealDiffs: boolean;
  /** Answer WebRTC offers, on the LAN (SignalingService on the gRPC port) and, online, through the cloud: platform-server's -webrtc. */
  webrtc: boolean;
  /** How long one call into a driver may take (callTimeoutMs(), read by main so that a bad value stops the start cleanly). */
  callTimeoutMs: number;
}

export interface MicroServer {
  machine: Machine;
  runtime: MicroRuntime;
  sink: LogSink;
  /** Present when the -config file holds only the part's credentials (core/online/README.md). */
  online?: OnlineMachine;
}

/**
 * How long one call into a driver may take before its caller gets DEADLINE_EXCEEDED. A value that is not
 * a number of at least 1 ms throws, naming the variable and the rule: a typo must not silently become 60 s.
 */
export const callTimeoutMs = () => envNumber('PLATFORM_MICRO_CALL_TIMEOUT_MS', 60_000, 1);

/** A small board's capture backlog is bounded unless the config bounds it itself (core/micro/README.md). */
export const MICRO_CAPTURE_DIR_BYTES = 64 * 1024 * 1024;

export async function composeMicro(options: MicroOptions): Promise<MicroServer> {
  const sink = await LogSink.create({ logFile: options.logFile });
  const file = new ConfigFile(options.configPath);
  const online = OnlineMachine.forFile(file, sink, { allowInsecureCreds: options.allowInsecureCreds });
  const source: ConfigSource = online?.config ?? file;
  const extensions = new KernelExtensions();
  extensions.provide(entrySubstitution, (entries) => {
    for (const entry of entries) {
      if (entry.api === DATA_MANAGER_API && entry.attributes.maximum_capture_dir_bytes === undefined)
        entry.attributes = { ...entry.attributes, maximum_capture_dir_bytes: MICRO_CAPTURE_DIR_BYTES };
    }
  });
  // The data manager, as in platform-server: its capture targets and its link to the cloud come from the config.
  extensions.provide(entryCompletion, (entries, { config, registry }) =>
    assembleDataManager(entries, registry, linkSettingsOf(config.cloud, options.allowInsecureCreds), undefined),
  );
  extensions.provide(missingModelExplanation, explainMissingModel);
  const machine = new Machine(
    microRegistry(),
    sink,
    defaultKernelOptions({ debug: options.debug }),
    extensions,
    new InProcessHosting(microDriver, options.callTimeoutMs),
  );
  const reloader = new ConfigReloader(source, machine, sink, extensions, { debug: options.debug, revealDiffs: options.revealDiffs });
  const sessions = machineSessions(
    machine,
    () => reloader.loaded?.config.session,
    sink.logger('platform.session', () => reloader.levelOf('platform.session')),
  );
  const runtime = new MicroRuntime(machine, sink, reloader, sessions, { noTls: options.noTls, webrtc: options.webrtc });
  // A config change: what this server leaves out of it is said, and a moved bind_address served, first.
  extensions.provide(configPreparation, (next, previous) => runtime.followChange(next, previous));
  return { machine, runtime, sink, online };
}
