// A program's web port: a page's static assets, gRPC-Web forwarded to the program's own gRPC server, the
// program's Prometheus metrics at /metrics, and (optionally) a CPU-profile endpoint. Plain HTTP/1.1;
// browsers reach it at http://host:port/. Shared by platform-server's control page (core/web/) and
// platform-cloud's data browser.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GrpcWebForwarder } from './grpc-web.js';
import { HostGuard, refuseForbidden, SECURITY_HEADERS } from './host-guard.js';
import { answerRefusal } from './request-body.js';
import { serveFile } from './static-files.js';
import { captureProfile, ProfileRequestError, profileSeconds } from './web-profile.js';
import { METRICS_PATH, serveMetrics } from '../telemetry/metrics-route.js';

/** A built page (`runtime`, `cloud`): dist/web/<page>, both when running from dist/ and from source (tests, tsx). */
export function builtAssetsDir(page: string): string {
  const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
  return basename(root) === 'dist' ? join(root, 'web', page) : join(root, 'dist/web', page);
}

/** network.web_bind_address, or by default bind_address's host with its port + 1 (ports 0 and 65535 give 0). */
export function webBindAddress(network: { bind_address: string; web_bind_address?: string }): string {
  if (network.web_bind_address) return network.web_bind_address;
  const colon = network.bind_address.lastIndexOf(':');
  const port = Number(network.bind_address.slice(colon + 1));
  // The last port has no next one: a free port then.
  return `${network.bind_address.slice(0, colon)}:${port === 0 || port === 65535 ? 0 : port + 1}`;
}

export interface WebServerOptions {
  bindAddress: string;
  /** Where the page's files are: -shareddir, or the built-in ones. */
  assetsDir: string;
  profiling: boolean;
  forwarder: GrpcWebForwarder;
  /** The names this port answers to besides loopback, IP addresses and PLATFORM_WEB_ALLOWED_HOSTS (host-guard.ts). */
  allowedHosts: readonly string[];
  /** A program's own HTTP routes (the cloud's thumbnails): true when it answered the request. */
  route?(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
  onError(message: string, error: unknown): void;
}

export interface WebServer {
  /** http://host:port/ actually bound. */
  url: string;
  stop(): Promise<void>;
}

async function serveProfile(url: URL, res: ServerResponse): Promise<void> {
  let seconds: number;
  try {
    seconds = profileSeconds(url.searchParams);
  } catch (err) {
    if (!(err instanceof ProfileRequestError)) throw err;
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`${err.message}\n`);
    return;
  }
  const profile = await captureProfile(seconds);
  res.writeHead(200, { 'content-type': 'application/json', 'content-disposition': 'attachment; filename="platform-server.cpuprofile"' });
  res.end(JSON.stringify(profile));
}

/** The host of a bind address (`host:port`, `[v6]:port`), brackets removed. */
export function bindHost(bindAddress: string): string {
  return bindAddress.slice(0, bindAddress.lastIndexOf(':')).replace(/^\[|\]$/g, '');
}

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const guard = new HostGuard([bindHost(options.bindAddress), ...options.allowedHosts]);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // Before anything else, the body included: a request naming another host is not for this port.
    const refusal = guard.refusal(req);
    if (refusal) return refuseForbidden(req, res, refusal, options.forwarder.refusals);
    if (GrpcWebForwarder.matches(req)) return options.forwarder.handle(req, res);
    const url = new URL(req.url ?? '/', 'http://page');
    if (url.pathname === '/debug/profile' && options.profiling) return serveProfile(url, res);
    if (url.pathname === METRICS_PATH) return serveMetrics(req, res);
    if (options.route && (await options.route(req, res, url))) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // Its body is not read (see answerRefusal).
      answerRefusal(
        req,
        res,
        () =>
          res
            .writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' })
            .end(`${req.method}: the page's files are read with GET; calls are gRPC-Web POSTs\n`),
        options.forwarder.refusals,
      );
      return;
    }
    return serveFile(options.assetsDir, url.pathname, res);
  };
  // Headers over 16 KiB are refused (431) before any handler runs; a request must arrive whole within
  // a minute (a slow sender cannot hold a body's bytes of the shared budget for long).
  const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((err) => {
      options.onError('web request failed', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  });
  const colon = options.bindAddress.lastIndexOf(':');
  const host = bindHost(options.bindAddress);
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', (err) => reject(new Error(`cannot serve the web page on ${options.bindAddress}: ${err.message}`)));
    server.listen(Number(options.bindAddress.slice(colon + 1)), host || undefined, () => resolvePromise());
  });
  const port = (server.address() as { port: number }).port;
  const shownHost = host.includes(':') ? `[${host}]` : host || 'localhost';
  return {
    url: `http://${shownHost}:${port}/`,
    stop: () =>
      new Promise<void>((resolvePromise) => {
        options.forwarder.close();
        server.close(() => resolvePromise());
        server.closeAllConnections();
      }),
  };
}
