// platform-cloud's web port: the data browser's built page (web/cloud/), gRPC-Web forwarded to the
// cloud's own gRPC server (every service it serves, the caller's `authorization` passed through, so the
// page is authorized exactly like any client), the thumbnails route (thumbnails.ts), and the machines'
// control page (web/runtime/, built) under /control/: opened from the Machines view as
// /control/?part=<id>, it reaches its machine over WebRTC through this cloud's signaling, so the browser
// needs no route to the machine's own ports.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentials, type ServiceDefinition } from '@grpc/grpc-js';
import { GrpcWebForwarder, methodTable } from '../../core/serving/web/grpc-web.js';
import { webLimitsFromEnv } from '../../core/serving/web/request-body.js';
import { builtAssetsDir, startWebServer, type WebServer } from '../../core/serving/web/web-server.js';
import { serveFile } from '../../core/serving/web/static-files.js';
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
  /** The control page's files, served under /control/; default the built control page (web/runtime/). */
  controlPageDir?: string;
  onError(message: string, error: unknown): void;
}

/** A wildcard bind is reached over loopback. */
function dialable(address: string): string {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return ['0.0.0.0', '[::]', '::', ''].includes(host) ? `localhost${address.slice(colon)}` : address;
}

/** Where the Machines view opens a part's control page: /control/?part=<part id>. */
export const CONTROL_PAGE_PATH = '/control/';

/** Serves the control page's files under /control/ (GET and HEAD; anything else is left to the web port's 405). */
async function serveControlPage(req: IncomingMessage, res: ServerResponse, url: URL, dir: string): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (url.pathname === CONTROL_PAGE_PATH.slice(0, -1)) {
    // Its files are named relative to the folder: /control would load /app.js, the cloud page's.
    res.writeHead(301, { location: `${CONTROL_PAGE_PATH}${url.search}` }).end();
    return true;
  }
  if (!url.pathname.startsWith(CONTROL_PAGE_PATH)) return false;
  await serveFile(dir, url.pathname.slice(CONTROL_PAGE_PATH.length - 1), res);
  return true;
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
  const controlPageDir = options.controlPageDir ?? builtAssetsDir('runtime');
  const server = await startWebServer({
    bindAddress: options.bindAddress,
    assetsDir: options.assetsDir ?? builtAssetsDir('cloud'),
    profiling: false,
    forwarder,
    allowedHosts: options.allowedHosts ?? [],
    route: async (req, res, url) => (await serveControlPage(req, res, url, controlPageDir)) || options.thumbnails.handle(req, res, url),
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
