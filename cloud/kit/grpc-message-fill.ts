// grpc-js keeps the chunks of an incoming message in a list and copies them into one buffer when its last
// chunk arrives: for a 61 MiB DataCaptureUpload that copy (and the fresh pages it touches) held the
// cloud's JavaScript thread for 60 to 130 ms in one piece, once per request, and every other
// organization's calls waited (bench:isolation huge-capture, issue 27 #5). Here a message past
// FILL_FROM_BYTES gets its buffer as soon as that much has arrived, and each later chunk is copied into it
// as it comes: the same copying, spread over the socket reads that bring the chunks, and nothing left to
// do when the last one arrives. Smaller messages are put together as grpc-js does. A message that is
// announced but never sent costs only what was sent: the buffer is made once FILL_FROM_BYTES arrived.
//
// installMessageFill() replaces StreamDecoder.prototype.write of grpc-js (the decoder of every call's
// incoming messages, server and client side) with one that keeps its own state and honours the decoder's
// maxReadMessageLength, with grpc-js' error text when a message is over it. It is installed once, by
// platform-cloud at start (`cloud/server/cloud-server.ts`).
import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder.js';

/** From this many bytes of a message on, its chunks are copied into its own buffer as they arrive. */
export const FILL_FROM_BYTES = 1024 * 1024;

interface Fill {
  /** The compression flag and the 4-byte length. */
  header: Buffer;
  headerRead: number;
  size: number;
  received: number;
  /** Chunks kept until FILL_FROM_BYTES arrived (views of the socket's buffers, as grpc-js keeps them). */
  parts: Buffer[];
  /** The message, framed, once FILL_FROM_BYTES arrived. */
  message?: Buffer;
}

const fill = Symbol('grpc-message-fill');

interface Decoder {
  maxReadMessageLength: number;
  [fill]?: Fill;
}

const fresh = (): Fill => ({ header: Buffer.alloc(5), headerRead: 0, size: 0, received: 0, parts: [] });

/** StreamDecoder.write: the framed messages that `data` completes (each with its 5-byte header, as grpc-js returns them). */
function write(this: Decoder, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let s = (this[fill] ??= fresh());
  let head = 0;
  while (head < data.length) {
    if (s.headerRead < 5) {
      const n = Math.min(5 - s.headerRead, data.length - head);
      data.copy(s.header, s.headerRead, head, head + n);
      s.headerRead += n;
      head += n;
      if (s.headerRead === 5) {
        s.size = s.header.readUInt32BE(1);
        if (this.maxReadMessageLength !== -1 && s.size > this.maxReadMessageLength) {
          throw new Error(`Received message larger than max (${s.size} vs ${this.maxReadMessageLength})`);
        }
        if (s.size === 0) {
          out.push(s.header);
          s = this[fill] = fresh();
        }
      }
      continue;
    }
    const n = Math.min(s.size - s.received, data.length - head);
    const chunk = data.subarray(head, head + n);
    if (s.message) {
      chunk.copy(s.message, 5 + s.received);
    } else {
      s.parts.push(chunk);
      if (s.received + n >= FILL_FROM_BYTES && s.received + n < s.size) {
        s.message = Buffer.allocUnsafe(5 + s.size);
        s.header.copy(s.message, 0);
        let at = 5;
        for (const part of s.parts) at += part.copy(s.message, at);
        s.parts = [];
      }
    }
    s.received += n;
    head += n;
    if (s.received === s.size) {
      out.push(s.message ?? Buffer.concat([s.header, ...s.parts], 5 + s.size));
      s = this[fill] = fresh();
    }
  }
  return out;
}

/** grpc-js' own StreamDecoder.write, as it was before installMessageFill (for tests). */
export const grpcWrite = StreamDecoder.prototype.write;

/** Makes every grpc-js call of this process receive its messages this way; idempotent. */
export function installMessageFill(): void {
  (StreamDecoder.prototype as unknown as { write: typeof write }).write = write;
}
