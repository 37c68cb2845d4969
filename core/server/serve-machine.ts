// The runtime's gRPC server as both runtimes start it (platform-server's Runtime, platform-micro-server's
// MicroRuntime): the machine's facts come from the config reloader, the sessions and the log ring, and
// TLS from the config's network section unless -no-tls.
import type { DriverLogger } from '../../plugins/driver.js';
import type { LoadedConfig } from '../config/config-file.js';
import { startRuntimeServer, type RuntimeServer } from '../grpc/runtime-server.js';
import type { Machine } from '../kernel/machine.js';
import type { LogRing } from '../logging/log-ring.js';
import type { Sessions } from '../session/sessions.js';
import { platformVersion } from '../version.js';
import type { ConfigReloader } from './config-reloader.js';

export interface MachineServing {
  machine: Machine;
  reloader: ConfigReloader;
  sessions: Sessions;
  logs: LogRing;
  /** RobotService.Shutdown. */
  shutdown: () => void;
  noTls: boolean;
  webrtc: boolean;
}

export function serveMachine(loaded: LoadedConfig, serving: MachineServing): Promise<RuntimeServer> {
  const { machine, reloader } = serving;
  const { network } = loaded.config;
  const tls = !serving.noTls && network.tls_cert_file && network.tls_key_file ? { certFile: network.tls_cert_file, keyFile: network.tls_key_file } : undefined;
  return startRuntimeServer(
    machine,
    {
      version: platformVersion(),
      machineState: () => machine.state,
      configError: () => reloader.problem,
      shutdown: serving.shutdown,
      sessions: serving.sessions,
      pendingConfig: () => reloader.pending,
      logs: serving.logs,
      config: { view: () => reloader.view(), save: (text) => reloader.save(text) },
    },
    { bindAddress: network.bind_address, tls, webrtc: serving.webrtc },
  );
}

/**
 * A config change that moves bind_address: serve on the new address (`serving` takes the new server as
 * soon as it listens), then stop the old one. If the new address cannot be bound, the old server keeps
 * serving and the error says so.
 */
export async function moveServer(
  old: RuntimeServer | undefined,
  start: () => Promise<RuntimeServer>,
  serving: (server: RuntimeServer) => void,
  log: DriverLogger,
): Promise<void> {
  try {
    const server = await start();
    serving(server);
    log.info('serving', { address: server.address, tls: server.tls });
    await old?.stop();
  } catch (err) {
    log.error('cannot serve on the new bind_address; still serving on the old one', { error: (err as Error).message });
  }
}
