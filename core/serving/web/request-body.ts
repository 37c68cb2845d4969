// A gRPC-Web request body, read with its limits enforced while it streams in. The forwarder once read
// every body whole before looking at it: one 1 GiB POST, without any login, took the cloud from 214 MB
// to 2.26 GB (issue 27, finding 2). Now the frame's announced length is checked as soon as its 5-byte
// head arrives, no body past the message limit is held, and all bodies being read together share one
// budget of bytes, so many medium bodies at once cannot add up either.
import { status } from '@grpc/grpc-js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echo } from '../bounded-text.js';
import { WebCallError } from '../errors.js';
import type { RefusalPacer } from '../refusal-pacer.js';
export { WebCallError };

export interface WebLimits {
  /** Largest request message (the frame's payload) forwarded. */
  maxRequestBytes: number;
  /** Most bytes of request bodies held at once, over all calls being read. */
  maxInflightBytes: number;
  /** Longest value of a header forwarded as gRPC metadata. */
  maxHeaderValueBytes: number;
}

export const DEFAULT_WEB_LIMITS: WebLimits = { maxRequestBytes: 4 * 1024 * 1024, maxInflightBytes: 64 * 1024 * 1024, maxHeaderValueBytes: 8192 };

const VARIABLES: Record<keyof WebLimits, string> = {
  maxRequestBytes: 'PLATFORM_WEB_MAX_REQUEST_BYTES',
  maxInflightBytes: 'PLATFORM_WEB_MAX_INFLIGHT_BYTES',
  maxHeaderValueBytes: 'PLATFORM_WEB_MAX_HEADER_BYTES',
};

/** The limits, each from its environment variable when set (a positive integer), else its default. */
export function webLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): WebLimits {
  const limits = { ...DEFAULT_WEB_LIMITS };
  for (const key of Object.keys(VARIABLES) as (keyof WebLimits)[]) {
    const raw = env[VARIABLES[key]];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${VARIABLES[key]} must be a positive integer (bytes), got ${JSON.stringify(echo(raw))}`);
    limits[key] = value;
  }
  return limits;
}

/** Bytes of request bodies held now, over all calls: a body's bytes are taken as they arrive. */
export class InflightBudget {
  private used = 0;
  constructor(readonly max: number) {}

  take(bytes: number): boolean {
    if (this.used + bytes > this.max) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }

  get held(): number {
    return this.used;
  }
}

const tooLarge = (length: number, max: number) =>
  new WebCallError(status.RESOURCE_EXHAUSTED, `the request message is ${length} bytes; this web port forwards at most ${max} (${VARIABLES.maxRequestBytes})`);

/**
 * The one data frame of a unary or server-streaming call's body, read as it arrives. Rejects with a
 * WebCallError as soon as the body breaks a rule (a Content-Length or an announced frame length past the
 * message limit, a first frame that is not data, bytes after the frame, the shared budget spent), without
 * reading further; the caller answers and closes the connection.
 */
export function readRequestFrame(req: IncomingMessage, limits: WebLimits, budget: InflightBudget): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > 5 + limits.maxRequestBytes) return Promise.reject(tooLarge(declared - 5, limits.maxRequestBytes));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let announced = -1;
    let settled = false;
    const finish = (err: Error | undefined, frame?: Buffer) => {
      if (settled) return;
      settled = true;
      budget.give(received);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (err) reject(err);
      else resolve(frame!);
    };
    const onData = (chunk: Buffer) => {
      if (!budget.take(chunk.length)) {
        finish(
          new WebCallError(
            status.RESOURCE_EXHAUSTED,
            `this web port is already holding ${budget.held} bytes of request bodies, its limit (${VARIABLES.maxInflightBytes}=${budget.max}); try again shortly`,
          ),
        );
        return;
      }
      chunks.push(chunk);
      received += chunk.length;
      if (announced < 0 && received >= 5) {
        const head = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        if (head[0] !== 0)
          return finish(new WebCallError(status.INVALID_ARGUMENT, `the gRPC-Web body's first frame must be a data frame (flag 0), not flag ${head[0]}`));
        announced = head.readUInt32BE(1);
        if (announced > limits.maxRequestBytes) return finish(tooLarge(announced, limits.maxRequestBytes));
      }
      if (announced >= 0 && received > 5 + announced) {
        finish(new WebCallError(status.INVALID_ARGUMENT, `the gRPC-Web body must hold exactly one frame of ${announced} bytes; more bytes followed it`));
      }
    };
    const onEnd = () => {
      if (received < 5)
        return finish(new WebCallError(status.INVALID_ARGUMENT, 'the gRPC-Web body must hold one length-prefixed message frame (at least 5 bytes)'));
      if (received < 5 + announced) {
        return finish(new WebCallError(status.INVALID_ARGUMENT, `the gRPC-Web frame announces ${announced} bytes but the body holds ${received - 5}`));
      }
      finish(undefined, Buffer.concat(chunks, received).subarray(5));
    };
    const onError = (err: Error) => finish(err);
    const onAborted = () => finish(new Error('the request was aborted'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

/** A refused request's body up to this size (by its Content-Length) is read and dropped; the connection stays open. */
const DRAINED_BODY_BYTES = 64 * 1024;

/**
 * Sends the answer to a refused request without reading its body further, after the wait `pacer`
 * gives the caller's address (none without one). A small body (by its
 * Content-Length) is read and dropped first, so the connection can serve the next request. Any other
 * body is left unread: the answer says `connection: close`, the connection is half-closed after it and
 * no longer read (TCP flow control then stops the sender, at no cost here), and a second later it is
 * destroyed; the second lets a client that is still sending read the answer rather than a reset.
 */
export function answerRefusal(req: IncomingMessage, res: ServerResponse, send: () => void, pacer?: RefusalPacer): void {
  // An address refused many times of late waits for its answer (refusal-pacer.ts); its body stays
  // unread meanwhile, so TCP flow control holds the sender at no cost here. The request is paused first:
  // a body reader that gave up (readRequestFrame) leaves it flowing, and a flowing body is read and
  // thrown away as fast as the sender sends (bench:isolation's huge-posts: 1.5 GB/s, a core busy). A
  // paused socket is not read, so a caller that goes away meanwhile is seen when the wait ends (at most
  // the pacer's longest wait), not before.
  if (pacer) {
    req.pause();
    pacer.pace(req.socket.remoteAddress ?? 'unknown', () => answerRefusal(req, res, send), req.socket);
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (req.complete || (Number.isFinite(declared) && declared <= DRAINED_BODY_BYTES)) {
    if (req.complete) return send();
    req.resume();
    req.once('end', send);
    return;
  }
  res.setHeader('connection', 'close');
  const socket = req.socket;
  // Node destroys a `connection: close` socket as soon as the answer is written, which with the body
  // unread resets the connection at once; linger instead.
  socket.destroySoon = () => {
    socket.end();
    socket.pause();
    setTimeout(() => socket.destroy(), 1000).unref();
  };
  send();
}
