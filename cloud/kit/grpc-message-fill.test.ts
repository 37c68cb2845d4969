// installMessageFill: grpc-js' incoming messages, the same bytes, without one whole-message copy at the end.
import test from 'ava';
import { StreamDecoder } from '@grpc/grpc-js/build/src/stream-decoder.js';
import { FILL_FROM_BYTES, grpcWrite, installMessageFill } from './grpc-message-fill.js';

installMessageFill();

/** A framed gRPC message of `size` bytes whose content depends on `seed`. */
function framed(size: number, seed: number, compressed = false): Buffer {
  const out = Buffer.allocUnsafe(5 + size);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(size, 1);
  for (let i = 0; i < size; i++) out[5 + i] = (i * 31 + seed) & 0xff;
  return out;
}

/** Splits `stream` into chunks of varied sizes (a fixed sequence, so every run feeds the same chunks). */
function chunks(stream: Buffer, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < stream.length; i++) {
    const n = Math.min(sizes[i % sizes.length], stream.length - at);
    out.push(stream.subarray(at, at + n));
    at += n;
  }
  return out;
}

function decodeAll(write: (this: StreamDecoder, data: Buffer) => Buffer[], parts: Buffer[], max = -1): Buffer[] {
  const decoder = new StreamDecoder(max);
  return parts.flatMap((p) => write.call(decoder, p));
}

test("gives the same messages as grpc-js' own decoder, however the bytes are split", (t) => {
  const messages = [
    framed(0, 1),
    framed(10, 2),
    framed(3 * FILL_FROM_BYTES + 7, 3),
    framed(1, 4, true),
    framed(FILL_FROM_BYTES, 5),
    framed(FILL_FROM_BYTES + 1, 6),
  ];
  const stream = Buffer.concat(messages);
  // Byte by byte (headers split too) over the small messages; in socket-sized pieces over all of them.
  const small = Buffer.concat(messages.slice(0, 2));
  t.deepEqual(decodeAll(StreamDecoder.prototype.write, chunks(small, [1])), [messages[0], messages[1]]);
  for (const sizes of [[16384], [16384, 3, 70000, 1, 2], [stream.length]]) {
    const parts = chunks(stream, sizes);
    const ours = decodeAll(StreamDecoder.prototype.write, parts);
    const theirs = decodeAll(grpcWrite, parts);
    t.is(ours.length, messages.length, `chunks ${sizes.join(',')}`);
    ours.forEach((m, i) => t.true(m.equals(theirs[i]) && m.equals(messages[i]), `message ${i}, chunks ${sizes.join(',')}`));
  }
});

test("a message over the decoder's limit is refused from its header, with grpc-js' error", (t) => {
  const parts = chunks(framed(2000, 1), [16]);
  const err = t.throws(() => decodeAll(StreamDecoder.prototype.write, parts, 1000));
  t.is(err.message, 'Received message larger than max (2000 vs 1000)');
  t.throws(() => decodeAll(grpcWrite, parts, 1000), { message: err.message });
});

test('a large message is copied into its buffer as its chunks arrive: no copy of the whole message when the last one comes', (t) => {
  const message = framed(8 * FILL_FROM_BYTES, 9);
  const parts = chunks(message, [16384]);
  const concat = Buffer.concat;
  const copies: number[] = [];
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    copies.push(total ?? list.reduce((n, b) => n + b.length, 0));
    return concat(list, total);
  }) as typeof Buffer.concat;
  try {
    const ours = decodeAll(StreamDecoder.prototype.write, parts);
    t.true(ours[0].equals(message));
    t.deepEqual(
      copies.filter((n) => n >= FILL_FROM_BYTES),
      [],
    );
    // grpc-js' own decoder copies all 8 MiB in one piece at the end.
    copies.length = 0;
    decodeAll(grpcWrite, parts);
    t.deepEqual(copies, [message.length]);
  } finally {
    Buffer.concat = concat;
  }
});
