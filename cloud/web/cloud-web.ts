// platform-cloud's web port: the data browser's built page (web/cloud/), gRPC-Web forwarded to the
// cloud's own gRPC server (every service it serves, the caller's `authorization` passed through, so the
// page is authorized exactly like any client), and the thumbnails route (thumbnails.ts).
import { credentials, type ServiceDefinition } from '@grpc/grpc-js';
import { GrpcWebForwarder, methodTable } from '../../core/serving/web/grpc-web.js';
import { webLimitsFromEnv } from '../../core/serving/web/request-body.js';
import { builtAssetsDir, startWebServer, type WebServer } from '../../core/serving/web/web-server.js';
import type { ServingTls } from '../kit/extension-contract.js';
import type { ThumbnailRoute } from './thumbnails.js';

export interface CloudWebOptions {
  /** host:port of the web port (port 0: a free one). */
  bindAddress: string;
  /** The cloud's gRPC host:port, dialled over loopback. */
  grpcAddress: string;
  tls?: ServingTls;
  /** Every service definition the cloud's gRPC server serves. */
  services: readonly ServiceDefinition[];
  thumbnails: ThumbnailRoute;
  /** Names the web port answers to besides its bind host, loopback and IP addresses (--web-allowed-hosts). */
  allowedHosts?: readonly string[];
  /** The page's files (tests may point elsewhere); default the built page. */
  assetsDir?: string;
  onError(message: string, error: unknown): void;
}

/** A wildcard bind is reached over loopback. */
function dialable(address: string): string {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return ['0.0.0.0', '[::]', '::', ''].includes(host) ? `localhost${address.slice(colon)}` : address;
}

/** --web-port's default: the gRPC port + 1 (a free port when gRPC took a free one, or at the last port). */
export function defaultWebPort(grpcPort: number): number {
  return grpcPort === 0 || grpcPort === 65535 ? 0 : grpcPort + 1;
}

export async function startCloudWeb(options: CloudWebOptions): Promise<WebServer> {
  // The cloud's own certificate is trusted for this loopback hop, whatever names it carries.
  const channelCredentials = options.tls ? credentials.createSsl(options.tls.cert, null, null, { checkServerIdentity: () => undefined }) : undefined;
  const forwarder = new GrpcWebForwarder(
    () => ({ address: dialable(options.grpcAddress), credentials: channelCredentials }),
    methodTable(options.services as unknown as Record<string, { path: string; requestStream: boolean; responseStream: boolean }>[]),
    webLimitsFromEnv(),
  );
  const server = await startWebServer({
    bindAddress: options.bindAddress,
    assetsDir: options.assetsDir ?? builtAssetsDir('cloud'),
    profiling: false,
    forwarder,
    allowedHosts: options.allowedHosts ?? [],
    route: (req, res, url) => options.thumbnails.handle(req, res, url),
    onError: options.onError,
  });
  return {
    url: server.url,
    stop: async () => {
      options.thumbnails.close();
      await server.stop();
    },
  };
}
