// The life of an upload stream (FileUpload, StreamingDataCaptureUpload): when it counts as complete,
// how long it may sit idle, and how many one principal may hold open. An upload's content is committed
// only after the client's own end of stream; a cancelled, dropped or idle stream stores nothing, so the
// client's retry with the same upload_id is a new upload, not a duplicate (issue 27, finding 4).
import { status, type ServerReadableStream } from '@grpc/grpc-js';
import { deadlineExceeded, resourceExhausted, StatusError } from '../../core/serving/status-error.js';
import type { Principal } from '../auth/principal.js';
import { envWholeNumber } from '../../core/serving/env.js';

export interface UploadStreamLimits {
  /** A stream that sends nothing for this long is closed (DEADLINE_EXCEEDED) and its content dropped. */
  idleTimeoutMs: number;
  /** Upload streams one principal (API key or machine part) may hold open at once. */
  maxStreamsPerPrincipal: number;
}

export const defaultUploadStreamLimits: UploadStreamLimits = { idleTimeoutMs: 30_000, maxStreamsPerPrincipal: 8 };

/** The limits from PLATFORM_UPLOAD_IDLE_TIMEOUT_MS and PLATFORM_UPLOAD_MAX_STREAMS_PER_PRINCIPAL. */
export function uploadStreamLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): UploadStreamLimits {
  return {
    idleTimeoutMs: envWholeNumber('PLATFORM_UPLOAD_IDLE_TIMEOUT_MS', defaultUploadStreamLimits.idleTimeoutMs, env),
    maxStreamsPerPrincipal: envWholeNumber('PLATFORM_UPLOAD_MAX_STREAMS_PER_PRINCIPAL', defaultUploadStreamLimits.maxStreamsPerPrincipal, env),
  };
}

/** The key a principal's limits are counted under: one per API key, one per machine part. */
export const principalKey = (p: Principal): string => (p.kind === 'part' ? `part:${p.partId}` : `key:${p.keyId}`);

/**
 * Counts the upload streams each principal holds open. Each open stream holds a temp file (a file
 * descriptor) until it ends; without a bound, one machine part held 19,531 descriptors with idle streams.
 */
export class UploadStreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for `principal`, or RESOURCE_EXHAUSTED naming the limit. Call the returned function once, when the stream ends. */
  take(principal: Principal, describe: string): () => void {
    const key = principalKey(principal);
    const held = this.open.get(key) ?? 0;
    if (held >= this.max) {
      throw resourceExhausted(
        `${describe} already has ${this.max} upload streams open, the limit (PLATFORM_UPLOAD_MAX_STREAMS_PER_PRINCIPAL); finish or cancel one first`,
      );
    }
    this.open.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }
}

/**
 * The messages of a client stream, ending only at the client's end of stream (half-close). A stream that
 * sends nothing for idleMs is destroyed with DEADLINE_EXCEEDED; a cancelled or dropped one throws CANCELLED.
 * The idle clock does not run while the caller handles a message (writing it to disk is the cloud's time).
 */
export async function* untilClientEnd<M>(call: ServerReadableStream<M, unknown>, idleMs: number, name: string): AsyncGenerator<M> {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      call.destroy(deadlineExceeded(`${name} was idle for more than ${idleMs} ms (PLATFORM_UPLOAD_IDLE_TIMEOUT_MS); nothing was stored, send it again`));
    }, idleMs);
  };
  try {
    arm();
    for await (const message of call as AsyncIterable<M>) {
      clearTimeout(timer);
      yield message;
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
  await checkNotCancelled(call, name, idleMs);
}

/** The HTTP/2 stream under a grpc-js server call: private to grpc-js, so looked for with care. */
interface Http2Underneath {
  closed?: boolean;
  session?: { destroyed: boolean; ping(callback: (err: Error | null) => void): boolean };
}

function http2StreamOf(call: ServerReadableStream<unknown, unknown>): Http2Underneath | undefined {
  // ServerReadableStreamImpl.call is the outermost intercepting call; each server interceptor wraps the
  // next in .nextCall, down to the base call, whose .stream is the HTTP/2 stream. Anything else (another
  // grpc-js layout) gives undefined, and the caller falls back to a short wait.
  let layer = (call as unknown as { call?: { stream?: Http2Underneath; nextCall?: unknown } }).call;
  for (let depth = 0; layer && depth < 16; depth++) {
    const stream = layer.stream;
    if (stream && typeof stream.session?.ping === 'function') return stream;
    layer = layer.nextCall as typeof layer;
  }
  return undefined;
}

/** Waits for an HTTP/2 PING round trip to the client, or `fallbackMs` when no ping can be sent. */
function roundTrip(call: ServerReadableStream<unknown, unknown>, fallbackMs: number, limitMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(limit);
      resolve();
    };
    const limit = setTimeout(done, limitMs);
    const session = http2StreamOf(call)?.session;
    const ping = () => {
      try {
        return !!session && !session.destroyed && session.ping((err) => (err ? setTimeout(done, fallbackMs) : done()));
      } catch {
        return false; // too many pings outstanding on this connection, say
      }
    };
    const sent = ping();
    if (!sent) setTimeout(done, fallbackMs);
  });
}

/**
 * Throws CANCELLED when the client cancelled the call or its connection dropped. Needed after a stream's
 * messages end, because a cancelled call looks like a finished one there: Node's HTTP/2 client closes a
 * stream it cancels by ending it (END_STREAM, which grpc-js hands on as the client's end of stream) and
 * only then resets it (RST_STREAM), a few milliseconds later (4 ms measured). The client sends its reset
 * before it answers a PING sent after its end of stream arrived, so one PING round trip lets the reset
 * arrive (or, where no ping can be sent, 50 ms).
 */
export async function checkNotCancelled(call: ServerReadableStream<unknown, unknown>, name: string, limitMs: number): Promise<void> {
  if (!call.cancelled) await roundTrip(call, 50, limitMs);
  await new Promise((resolve) => setImmediate(resolve));
  // Not call.destroyed: a stream that ended normally is destroyed too (autoDestroy).
  if (call.cancelled || http2StreamOf(call)?.closed) {
    throw new StatusError(status.CANCELLED, `${name} was cancelled or cut off before the client's end of stream; nothing was stored, send it again`);
  }
}
