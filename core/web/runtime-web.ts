// Starts the control page's web port for platform-server, forwarding to its gRPC server (see grpc-web.ts).
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { RobotServiceService } from '../../gen/platform/robot/v1/robot.js';
import { apiAdapters } from '../grpc/apis/index.js';
import { GrpcWebForwarder, methodTable } from '../serving/web/grpc-web.js';
import { webLimitsFromEnv } from '../serving/web/request-body.js';
import { bindHost, builtAssetsDir, startWebServer, webBindAddress, type WebServer } from '../serving/web/web-server.js';

export interface RuntimeWebOptions {
  network: { bind_address: string; web_bind_address?: string; web_allowed_hosts?: readonly string[]; tls_cert_file?: string };
  /** The gRPC server's current host:port, and whether it speaks TLS. */
  grpc: () => { address: string; tls: boolean };
  shareddir?: string;
  webprofile: boolean;
  onError(message: string, error: unknown): void;
}

/** A wildcard bind is reached over loopback. */
function dialable(address: string): string {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return ['0.0.0.0', '[::]', '::', ''].includes(host) ? `localhost${address.slice(colon)}` : address;
}

export function startRuntimeWeb(options: RuntimeWebOptions): Promise<WebServer> {
  let tlsCredentials: ChannelCredentials | undefined;
  const forwarder = new GrpcWebForwarder(
    () => {
      const { address, tls } = options.grpc();
      if (tls && !tlsCredentials && options.network.tls_cert_file) {
        // The runtime's own certificate is trusted for this loopback hop, whatever names it carries.
        tlsCredentials = credentials.createSsl(readFileSync(options.network.tls_cert_file), null, null, { checkServerIdentity: () => undefined });
      }
      return { address: dialable(address), credentials: tls ? tlsCredentials : undefined };
    },
    methodTable([RobotServiceService, ...apiAdapters.map((a) => a.definition)]),
    webLimitsFromEnv(),
  );
  return startWebServer({
    bindAddress: webBindAddress(options.network),
    assetsDir: options.shareddir ?? builtAssetsDir('runtime'),
    profiling: options.webprofile,
    forwarder,
    // The gRPC port's host names this machine too; network.web_allowed_hosts adds names (a DNS name, say).
    allowedHosts: [bindHost(options.network.bind_address), ...(options.network.web_allowed_hosts ?? [])],
    onError: options.onError,
  });
}
