// The runtime's gRPC server: RobotService, every resource API, reflection and health, on the config's
// network.bind_address, with TLS when certificates are configured (unless -no-tls).
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignalingServiceService } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { CONNECT_TIMEOUT_MS, CONNECT_TIMEOUT_SETTING, WebRtcAnswerer } from '../webrtc/answerer.js';
import { envWholeNumber } from '../serving/env.js';
import { localSignaling } from '../webrtc/local-signaling.js';
import { RobotServiceService } from '../../gen/platform/robot/v1/robot.js';
import type { ResourceAccess } from './api-adapter.js';
import { apiAdapters } from './apis/index.js';
import { robotService, type RobotFacts } from './apis/robot.js';
import { sessionAccess } from './session-access.js';
import { withBoundedStatus } from '../serving/bounded-status.js';
import { withCallMetrics } from '../serving/telemetry/grpc-metrics.js';
import { withCallTracing } from '../serving/telemetry/grpc-tracing.js';
import { addStandardServicesWithReflection } from '../serving/standard-services.js';
import { ModuleApiServices, type ModuleApi } from './module-apis.js';

export interface RuntimeServerOptions {
  bindAddress: string;
  tls?: { certFile: string; keyFile: string };
  /** Answer WebRTC offers (-webrtc, default true): SignalingService on this port, and `answerer` for the cloud's. */
  webrtc?: boolean;
}

export interface RuntimeServer {
  /** host:port actually bound (the port is resolved when the config asked for port 0). */
  address: string;
  tls: boolean;
  /** Answers WebRTC offers and serves gRPC on their data channels through this server; undefined with -webrtc=false. */
  answerer?: WebRtcAnswerer;
  /** Serves exactly these module-defined APIs; returns the errors of those that could not be served. */
  serveModuleApis(apis: readonly ModuleApi[]): Error[];
  stop(): Promise<void>;
}

export async function startRuntimeServer(machine: ResourceAccess, facts: RobotFacts, options: RuntimeServerOptions): Promise<RuntimeServer> {
  // Every handler reaches drivers through sessions, so that what a session commands can be stopped.
  const access = sessionAccess(machine, facts.sessions);
  // Every status it sends is bounded (bounded-status.ts): no echoed input can wedge a client's connection.
  const server = new Server(
    withCallMetrics(
      withCallTracing(withBoundedStatus({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.max_send_message_length': 64 * 1024 * 1024 })),
    ),
  );
  server.addService(RobotServiceService, robotService(access, facts));
  for (const adapter of apiAdapters) server.addService(adapter.definition, adapter.implementation(access));
  // Reflection lists exactly the services added above: the descriptor set also holds the cloud's protos,
  // which this server does not serve.
  const served = ['platform.robot.v1.RobotService', ...apiAdapters.map((a) => a.serviceName)];
  // gRPC over WebRTC reaches this same server through a private socket (a folder only this user can
  // enter), so that calls on a data channel run the very handlers, interceptors and limits of this port
  // whatever its TLS (core/webrtc/channel-server.ts).
  let answerer: WebRtcAnswerer | undefined;
  let bridgeDir: string | undefined;
  if (options.webrtc ?? true) {
    bridgeDir = mkdtempSync(join(tmpdir(), 'platform-webrtc-'));
    answerer = new WebRtcAnswerer(`unix:${join(bridgeDir, 'grpc.sock')}`, {
      connectTimeoutMs: envWholeNumber(CONNECT_TIMEOUT_SETTING, CONNECT_TIMEOUT_MS),
    });
    server.addService(SignalingServiceService, localSignaling(answerer));
    served.push('platform.rpc.webrtc.v1.SignalingService');
  }
  const { health, reflection } = addStandardServicesWithReflection(server, served);
  const moduleApis = new ModuleApiServices(server, access, (loaded) => {
    reflection.setExtra(
      loaded.map((l) => l.packageDefinition),
      loaded.map((l) => l.api.service),
    );
    for (const l of loaded) health.setStatus(l.api.service, 'SERVING');
  });
  const credentials = options.tls
    ? ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(options.tls.certFile), private_key: readFileSync(options.tls.keyFile) }], false)
    : ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(options.bindAddress, credentials, (err, bound) =>
      err ? reject(new Error(`cannot serve on ${options.bindAddress}: ${err.message}`)) : resolve(bound),
    ),
  );
  if (bridgeDir) {
    const socket = `unix:${join(bridgeDir, 'grpc.sock')}`;
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(socket, ServerCredentials.createInsecure(), (err) =>
        err ? reject(new Error(`cannot serve WebRTC calls on ${socket}: ${err.message}`)) : resolve(),
      ),
    );
  }
  health.setStatus('', 'SERVING');
  for (const name of served) health.setStatus(name, 'SERVING');
  const host = options.bindAddress.slice(0, options.bindAddress.lastIndexOf(':'));
  return {
    address: `${host}:${port}`,
    tls: Boolean(options.tls),
    answerer,
    serveModuleApis: (apis) => moduleApis.update(apis),
    stop: () =>
      new Promise<void>((resolve) => {
        health.setStatus('', 'NOT_SERVING');
        answerer?.stop();
        // Give in-flight calls (such as the Shutdown call itself) a moment, then force.
        const force = setTimeout(() => {
          server.forceShutdown();
          if (bridgeDir) rmSync(bridgeDir, { recursive: true, force: true });
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          if (bridgeDir) rmSync(bridgeDir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
