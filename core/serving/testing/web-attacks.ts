// Test and benchmark helper: hostile requests against a web port (issue 27): gRPC-Web calls with any
// headers, bodies of any size generated while they are sent, and a process' RSS from /proc.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';

export interface WebReply {
  httpStatus: number;
  headers: Record<string, string | string[] | undefined>;
  /** grpc-status of the trailer frame (-1 without one). */
  code: number;
  /** grpc-message, decoded. */
  detail: string;
  /** The data frame's payload, if any. */
  reply?: Buffer;
  /** The whole body (for non-gRPC answers). */
  body: Buffer;
}

export function parseGrpcWeb(httpStatus: number, headers: WebReply['headers'], body: Buffer): WebReply {
  let code = -1;
  let detail = '';
  let reply: Buffer | undefined;
  for (let at = 0; at + 5 <= body.length;) {
    const length = body.readUInt32BE(at + 1);
    const payload = body.subarray(at + 5, at + 5 + length);
    if (body[at] === 0) reply = payload;
    else {
      const text = payload.toString();
      code = Number(/grpc-status: (\d+)/.exec(text)?.[1] ?? -1);
      detail = decodeURIComponent(/grpc-message: (.*)\r\n/.exec(text)?.[1] ?? '');
    }
    at += 5 + length;
  }
  return { httpStatus, headers, code, detail, reply, body };
}

/**
 * A unary gRPC-Web call with a small body, over plain HTTP (any Host and Origin can be set; from
 * `localAddress`, another loopback address such as 127.0.0.2, to be another browser).
 */
export function grpcWebCall(
  baseUrl: string,
  path: string,
  message: Uint8Array,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<WebReply> {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return hostilePost(baseUrl, path, { headers, body: Buffer.concat([head, message]), localAddress });
}

export interface HostilePost {
  headers?: Record<string, string>;
  /** A body sent whole (with its Content-Length). */
  body?: Buffer;
  /** Or: a frame head announcing this length, then zeros up to `sendBytes` in all, chunked, made while sent. */
  announce?: number;
  sendBytes?: number;
  /** The local address to send from. */
  localAddress?: string;
}

/**
 * POSTs to the web port and resolves with its answer. A generated body stops being sent as soon as the
 * answer arrives or the connection closes; `sent` says how much of it went out.
 */
export function hostilePost(baseUrl: string, path: string, post: HostilePost): Promise<WebReply & { sent: number }> {
  const url = new URL(path, baseUrl);
  const headers = { 'content-type': 'application/grpc-web+proto', ...post.headers };
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const options = {
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers,
      setHost: !('host' in headers),
      localAddress: post.localAddress,
    };
    const req = request(options, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ...parseGrpcWeb(res.statusCode ?? 0, res.headers, Buffer.concat(chunks)), sent }));
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (post.body) {
      req.end(post.body);
      return;
    }
    const head = Buffer.alloc(5);
    head.writeUInt32BE(post.announce ?? 0, 1);
    req.write(head);
    const chunk = Buffer.alloc(64 * 1024);
    const total = post.sendBytes ?? 0;
    const pump = () => {
      while (!answered && !req.destroyed && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump();
  });
}

/** Resident set size of a process, in bytes (from /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Runs `work` while sampling the process' RSS every 10 ms: the highest RSS seen, and the work's result. */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = rssBytes(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 10);
  try {
    const result = await work();
    peak = Math.max(peak, rssBytes(pid));
    return { peak, result };
  } finally {
    clearInterval(sampler);
  }
}
