// Writing a server stream with the call's flow control: a write that fills the call's buffer waits
// for 'drain', so a slow client slows the producer down instead of the server buffering everything.
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { Readable } from 'node:stream';

/** Writes one message; resolves when the call can take more, rejects when the client cancelled. */
export async function writeMessage<Req, Res>(call: ServerWritableStream<Req, Res>, message: Res): Promise<void> {
  if (call.cancelled) throw new Error('the client cancelled the call');
  if (call.write(message)) return;
  await new Promise<void>((resolve, reject) => {
    const done = () => {
      call.off('cancelled', cancelled);
      resolve();
    };
    const cancelled = () => {
      call.off('drain', done);
      reject(new Error('the client cancelled the call'));
    };
    call.once('drain', done);
    call.once('cancelled', cancelled);
  });
}

/** Writes `bytes` as `{data}` messages of at most `chunkBytes`. */
export async function writeData<Req>(call: ServerWritableStream<Req, { data: Buffer }>, bytes: Uint8Array, chunkBytes = 256 * 1024): Promise<void> {
  for (let at = 0; at < bytes.byteLength; at += chunkBytes) await writeMessage(call, { data: Buffer.from(bytes.subarray(at, at + chunkBytes)) });
}

/**
 * Writes a stream of bytes (a blob being read) as messages of chunkBytes (the last one shorter): pieces
 * as small as an S3 body's socket reads are gathered rather than each sent as a message. Reads no
 * further ahead than the call takes; the source is destroyed when this ends, the client's cancel included.
 */
export async function writeStream<Req, Res>(
  call: ServerWritableStream<Req, Res>,
  source: Readable,
  message: (bytes: Buffer) => Res,
  chunkBytes = 256 * 1024,
): Promise<void> {
  let pending: Buffer[] = [];
  let size = 0;
  try {
    for await (const piece of source) {
      let rest = piece as Buffer;
      while (rest.byteLength > 0) {
        const take = Math.min(chunkBytes - size, rest.byteLength);
        pending.push(rest.subarray(0, take));
        size += take;
        rest = rest.subarray(take);
        if (size < chunkBytes) continue;
        await writeMessage(call, message(Buffer.concat(pending, size)));
        pending = [];
        size = 0;
      }
    }
    if (size > 0) await writeMessage(call, message(Buffer.concat(pending, size)));
  } finally {
    source.destroy();
  }
}
