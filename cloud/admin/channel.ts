// The admin channel: a loopback-only HTTP server on a unix socket in the data dir (mode 0600), through
// which admin commands reach a running server. DuckDB lets only one process write the database file,
// so while the server runs, admin commands must go through it.
import { createHash } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { StatusError } from '../../core/serving/status-error.js';
import { decodePath } from '../../core/serving/web/static-files.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import type { AdminAction } from './actions.js';
import { AdminError } from '../errors/catalogue.js';
export { AdminError };

/** Unix socket paths are limited to ~107 bytes; long data dirs get a socket in the temp folder named by a hash. */
export function adminSocketPath(dataDir: string): string {
  const inDir = join(resolve(dataDir), 'admin.sock');
  if (inDir.length < 100) return inDir;
  const hash = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16);
  return join(tmpdir(), `platform-cloud-${hash}.sock`);
}

export async function startAdminChannel(dataDir: string, store: StoreWithBlobs, actions: Record<string, AdminAction>): Promise<Server> {
  const path = adminSocketPath(dataDir);
  // A socket left by a killed server would make listen fail; we hold the database lock, so it is stale.
  rmSync(path, { force: true });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      // A malformed escape would throw here, in an event handler, and end the whole server.
      const name = decodePath((req.url ?? '').replace(/^\/actions\//, ''));
      if (name === undefined) return reply(400, { error: 'admin action name: malformed percent-encoding in the URL path' });
      const action = actions[name];
      if (req.method !== 'POST' || !action) return reply(404, { error: `unknown admin action "${name}"` });
      let args: Record<string, unknown>;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        return reply(400, { error: 'admin request body must be JSON' });
      }
      action(store, args).then(
        (result) => reply(200, { result }),
        (err: unknown) => reply(400, { error: (err as Error).message, code: err instanceof StatusError ? err.code : undefined }),
      );
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolveListen());
  });
  chmodSync(path, 0o600);
  return server;
}

/** Sends an action to a running server. Resolves undefined when no server listens (so the caller opens the store). */
export function callAdminChannel(dataDir: string, name: string, args: Record<string, unknown>): Promise<{ result: unknown } | undefined> {
  return new Promise((resolvePromise, reject) => {
    const req = request(
      { socketPath: adminSocketPath(dataDir), path: `/actions/${encodeURIComponent(name)}`, method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: { result?: unknown; error?: string; code?: number };
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
          } catch {
            return reject(new AdminError('the server answered the admin request with something that is not JSON'));
          }
          if (res.statusCode !== 200) return reject(new AdminError(body.error ?? `admin request failed with HTTP ${res.statusCode}`, body.code));
          resolvePromise({ result: body.result });
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolvePromise(undefined);
      else reject(err);
    });
    req.end(JSON.stringify(args));
  });
}
