import test from 'ava';
import { Request, Response } from '../../../gen/platform/rpc/webrtc/v1/grpc.js';
import {
  BROWSER_PACKET_BYTES,
  FrameWriter,
  HIGH_WATER_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_PACKET_BYTES,
  MessageTooLargeError,
  NODE_PACKET_BYTES,
  Reassembler,
  decodeRequest,
  packetize,
} from './framing.js';

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

test('packetize cuts at the packet size and marks only the last packet eom', (t) => {
  const message = bytes(BROWSER_PACKET_BYTES * 2 + 5);
  const packets = packetize(message, BROWSER_PACKET_BYTES);
  t.deepEqual(
    packets.map((p) => [p.data.length, p.eom]),
    [
      [BROWSER_PACKET_BYTES, false],
      [BROWSER_PACKET_BYTES, false],
      [5, true],
    ],
  );
  t.deepEqual(packetize(bytes(MAX_PACKET_BYTES)).length, 1);
  t.deepEqual(packetize(bytes(MAX_PACKET_BYTES + 1)).length, 2);
});

test('an empty message is one empty packet that ends it', (t) => {
  t.deepEqual(packetize(new Uint8Array(0)), [{ data: new Uint8Array(0), eom: true }]);
});

test('packetize refuses packet sizes above 65,535 bytes or below 1', (t) => {
  t.throws(() => packetize(bytes(1), MAX_PACKET_BYTES + 1), { message: /packetBytes must be an integer from 1 to 65535/ });
  t.throws(() => packetize(bytes(1), 0), { instanceOf: RangeError });
});

test('the reassembler joins packets into the original message, one message after another', (t) => {
  const r = new Reassembler();
  const first = bytes(200_000);
  const second = bytes(3);
  const out: Uint8Array[] = [];
  for (const p of [...packetize(first, BROWSER_PACKET_BYTES), ...packetize(second)]) {
    const m = r.push(p);
    if (m) out.push(m);
  }
  t.is(out.length, 2);
  t.deepEqual(Buffer.from(out[0]), Buffer.from(first));
  t.deepEqual(Buffer.from(out[1]), Buffer.from(second));
});

test('the reassembler refuses a 33 MiB message as soon as it passes 32 MiB, then takes the next message', (t) => {
  const r = new Reassembler();
  const packet = { data: Buffer.alloc(MAX_PACKET_BYTES), eom: false };
  const packetsFor33MiB = Math.ceil((33 * 1024 * 1024) / MAX_PACKET_BYTES);
  let refusedAt = -1;
  for (let i = 0; i < packetsFor33MiB; i++) {
    try {
      r.push(packet);
    } catch (err) {
      t.true(err instanceof MessageTooLargeError);
      refusedAt = i;
      break;
    }
  }
  t.is(refusedAt, Math.floor(MAX_MESSAGE_BYTES / MAX_PACKET_BYTES));
  t.deepEqual(Buffer.from(r.push({ data: Buffer.from(bytes(4)), eom: true })!), Buffer.from(bytes(4)));
});

test('garbage does not decode as a request', (t) => {
  t.is(decodeRequest(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f])), undefined);
  t.is(decodeRequest(new Uint8Array(0)), undefined, 'a request without a stream is dropped');
});

/** A sink that holds what is sent until released, like a data channel whose peer stopped reading. */
function heldSink() {
  const queue: Uint8Array[] = [];
  const waiters: { threshold: number; resolve: () => void }[] = [];
  const received: number[] = [];
  let buffered = 0;
  let sent = 0;
  return {
    received,
    get sent() {
      return sent;
    },
    get bufferedAmount() {
      return buffered;
    },
    open: true,
    send(frame: Uint8Array) {
      sent++;
      queue.push(frame);
      buffered += frame.length;
    },
    drained: (threshold: number) => (buffered <= threshold ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ threshold, resolve }))),
    /** Delivers everything held, then whatever the released writers send next. */
    release() {
      while (queue.length > 0) {
        const frame = queue.shift()!;
        buffered -= frame.length;
        received.push(frame[0]);
        for (const w of waiters.splice(0).filter((w) => buffered <= w.threshold)) w.resolve();
      }
    },
  };
}

test('the writer stops sending while more than 1 MiB is buffered, and sends the rest in order once it drains', async (t) => {
  const sink = heldSink();
  const writer = new FrameWriter(sink);
  const frame = (i: number) => {
    const f = new Uint8Array(100_000);
    f[0] = i;
    return f;
  };
  const writes = Array.from({ length: 30 }, (_, i) => writer.write(frame(i)));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  // It sent until the buffer passed the high-water mark, and no further.
  t.is(sink.sent, Math.floor(HIGH_WATER_BYTES / 100_000) + 1);
  t.true(sink.bufferedAmount <= HIGH_WATER_BYTES + 100_000);
  let done = false;
  const all = Promise.all(writes).then(() => (done = true));
  while (!done) {
    sink.release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await all;
  sink.release();
  t.deepEqual(
    sink.received,
    Array.from({ length: 30 }, (_, i) => i),
  );
});

test("a frame of a full Node packet fits werift's 65,536-byte data-channel message, with the largest stream id", (t) => {
  const [packet] = packetize(bytes(NODE_PACKET_BYTES));
  const id = Number.MAX_SAFE_INTEGER;
  const response = Response.encode({ stream: { id }, message: { packetMessage: packet } }).finish();
  const request = Request.encode({ stream: { id }, message: { hasMessage: true, packetMessage: packet, eos: true } }).finish();
  t.true(response.length <= 65_536, `${response.length} bytes`);
  t.true(request.length <= 65_536, `${request.length} bytes`);
});
