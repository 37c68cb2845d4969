// GET /metrics on a program's web port: the registry (metrics.ts) in Prometheus's text format. The web
// port's Host/Origin guard (host-guard.ts) runs first: a scraper that names the port by loopback or an IP
// address is served; one that names it by a DNS name needs that name in the port's allowed hosts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { METRICS_CONTENT_TYPE, metricsText } from './metrics.js';

export const METRICS_PATH = '/metrics';

export async function serveMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end(`${req.method}: ${METRICS_PATH} is read with GET\n`);
    return;
  }
  const text = await metricsText();
  res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : text);
}
