// Writing a server stream with the call's flow control: a write that fills the call's buffer waits
// for 'drain', so a slow client slows the producer down instead of the server buffering everything.
import type { ServerWritableStream } from '@grpc/grpc-js';

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
