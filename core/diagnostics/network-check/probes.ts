// The network probes of -network-check. Each one does the real operation the runtime depends on (bind,
// resolve, connect) once, so that a failure is the same error the runtime would hit.
import { lookup } from 'node:dns/promises';
import { createConnection, createServer } from 'node:net';
import { ProbeTimeoutError } from '../../serving/errors.js';
export { ProbeTimeoutError };

/** Bounds a probe whose operation cannot be cancelled (getaddrinfo runs on the thread pool to the end). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ProbeTimeoutError(ms)), ms).unref()));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Binds host:port and releases it at once: proves the runtime could serve there now. */
export function probeBind(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? new Error(`${err.message}: another process serves there (is platform-server already running?)`) : err);
    });
    // An empty host is every interface, as in the runtime.
    server.listen({ host: host || undefined, port, exclusive: true }, () => {
      const bound = server.address();
      server.close(() => resolve(typeof bound === 'object' && bound ? `bound ${bound.address}:${bound.port}` : 'bound'));
    });
  });
}

/** Resolves a host name through the system resolver, as the gRPC clients do. */
export async function probeDns(host: string): Promise<string> {
  const addresses = await lookup(host, { all: true });
  return addresses.map((a) => a.address).join(', ');
}

/** Opens a TCP connection and closes it. */
export function probeTcp(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(timeoutMs, () => socket.destroy(new ProbeTimeoutError(timeoutMs)));
    socket.once('connect', () => {
      const remote = `${socket.remoteAddress}:${socket.remotePort}`;
      socket.destroy();
      resolve(`connected to ${remote}`);
    });
    socket.once('error', reject);
  });
}
