// gRPC over a data channel, end to end without WebRTC: a real grpc-js server, the runtime's channel server
// bridging to it, and the client's channel, joined by an in-memory channel.
import test from 'ava';
import {
  Client,
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as Status,
  type ServiceDefinition,
  type ServiceError,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServerReadableStream,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { serveChannel, type ChannelServerOptions } from './channel-server.js';
import { ChannelClient } from '../serving/webrtc/channel-client.js';
import { memoryFrameChannelPair } from '../serving/testing/memory-frame-channel.js';
import { MAX_PACKET_BYTES } from '../../plugins/formats/webrtc-framing/framing.js';
import { Request, Response } from '../../gen/platform/rpc/webrtc/v1/grpc.js';
import { eventually } from '../serving/testing/eventually.js';

const json = { serialize: (v: unknown) => Buffer.from(JSON.stringify(v)), deserialize: (b: Buffer) => JSON.parse(b.toString()) as unknown };
const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/test.Echo/${name}`,
  requestStream,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
const definition = {
  echo: method('Echo', false, false),
  count: method('Count', false, true),
  sum: method('Sum', true, false),
  hang: method('Hang', false, false),
} as ServiceDefinition;

interface Echo extends Client {
  echo(req: unknown, md: Metadata, opts: object, cb: (err: ServiceError | null, res: unknown) => void): void;
  count(req: unknown): NodeJS.ReadableStream & { cancel(): void };
  sum(cb: (err: ServiceError | null, res: { total: number }) => void): { write(m: unknown): void; end(): void };
  hang(req: unknown, md: Metadata, opts: object, cb: (err: ServiceError | null, res: unknown) => void): void;
}
const EchoClient = makeGenericClientConstructor(definition, 'Echo') as unknown as new (...args: ConstructorParameters<typeof Client>) => Echo;

async function setup(options: ChannelServerOptions = {}) {
  const server = new Server();
  const hangs = { started: 0, cancelled: 0 };
  const counts = { ended: 0 };
  server.addService(definition, {
    echo: (call: ServerUnaryCall<{ text: string; fail?: boolean }, unknown>, cb: sendUnaryData<unknown>) => {
      if (call.request.fail) return cb({ code: Status.FAILED_PRECONDITION, details: 'asked to fail' });
      cb(null, { text: call.request.text, who: call.metadata.get('who')[0] ?? null });
    },
    count: (call: ServerWritableStream<{ n: number; size: number }, unknown>) => {
      for (let i = 0; i < call.request.n; i++) call.write({ i, pad: 'x'.repeat(call.request.size) });
      call.end();
      counts.ended++;
    },
    sum: (call: ServerReadableStream<{ v: number }, unknown>, cb: sendUnaryData<unknown>) => {
      let total = 0;
      call.on('data', (m: { v: number }) => (total += m.v));
      call.on('end', () => cb(null, { total }));
    },
    hang: (call: ServerUnaryCall<unknown, unknown>) => {
      hangs.started++;
      call.on('cancelled', () => hangs.cancelled++);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const target = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const [callerEnd, machineEnd] = memoryFrameChannelPair();
  const dropped: string[] = [];
  const served = serveChannel(machineEnd, target, { ...options, onDropped: (r) => dropped.push(r) });
  const channel = new ChannelClient(callerEnd);
  const client = new EchoClient('webrtc.invalid:1', credentials.createInsecure(), { interceptors: [channel.interceptor] });
  const responses: Response[] = [];
  callerEnd.onFrame((f) => responses.push(Response.decode(f)));
  const rawBytes = (frame: Uint8Array) => callerEnd.send(frame);
  const raw = (request: Request) => rawBytes(Request.encode(request).finish());
  const teardown = () => {
    served.close();
    client.close();
    target.close();
    server.forceShutdown();
  };
  return { client, hangs, counts, machineEnd, dropped, responses, raw, rawBytes, teardown };
}

const unary = <T>(start: (cb: (err: ServiceError | null, res: T) => void) => void) =>
  new Promise<T>((resolve, reject) => start((err, res) => (err ? reject(err) : resolve(res))));

test('a unary call goes over the channel with its metadata, and errors keep their code and message', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  const md = new Metadata();
  md.set('who', 'caller');
  t.deepEqual(await unary((cb) => s.client.echo({ text: 'hi' }, md, {}, cb)), { text: 'hi', who: 'caller' });
  const err = await t.throwsAsync(unary((cb) => s.client.echo({ text: 'x', fail: true }, new Metadata(), {}, cb)));
  t.is((err as ServiceError).code, Status.FAILED_PRECONDITION);
  t.is((err as ServiceError).details, 'asked to fail');
});

test('a server stream delivers every message in order, large ones in many packets', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  const got: number[] = [];
  const stream = s.client.count({ n: 20, size: MAX_PACKET_BYTES * 3 });
  for await (const m of stream as AsyncIterable<{ i: number; pad: string }>) {
    t.is(m.pad.length, MAX_PACKET_BYTES * 3);
    got.push(m.i);
  }
  t.deepEqual(
    got,
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test('a server stream that ends while the channel is full still delivers every message before its status', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  // The machine's end stops delivering: its buffer passes the high-water mark, so the bridge holds its
  // reads while the handler finishes and its status reaches the bridge with messages still held there.
  s.machineEnd.hold();
  const got: number[] = [];
  const stream = s.client.count({ n: 12, size: 200_000 });
  const done = (async () => {
    for await (const m of stream as AsyncIterable<{ i: number }>) got.push(m.i);
  })();
  await eventually(
    () => s.counts.ended,
    (n) => n === 1,
  );
  await new Promise((r) => setTimeout(r, 300));
  s.machineEnd.release();
  await done;
  t.deepEqual(
    got,
    Array.from({ length: 12 }, (_, i) => i),
  );
});

test('a client stream sends every message and the half-close', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  const result = await unary<{ total: number }>((cb) => {
    const call = s.client.sum(cb);
    for (let v = 1; v <= 10; v++) call.write({ v });
    call.end();
  });
  t.is(result.total, 55);
});

test('a deadline reaches the handler side: the call ends DEADLINE_EXCEEDED', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  const err = await t.throwsAsync(unary((cb) => s.client.hang({}, new Metadata(), { deadline: Date.now() + 300 }, cb)));
  t.is((err as ServiceError).code, Status.DEADLINE_EXCEEDED);
});

test('an unknown method gets UNIMPLEMENTED trailers', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  s.raw({ stream: { id: 7 }, headers: { method: '/test.Echo/Nope', metadata: { md: {} } } });
  s.raw({ stream: { id: 7 }, message: { hasMessage: true, packetMessage: { data: Buffer.from('{}'), eom: true }, eos: true } });
  s.raw({ stream: { id: 8 }, headers: { method: 'not a path', metadata: { md: {} } } });
  const trailers = await eventually(
    () => s.responses.filter((r) => r.trailers),
    (list) => list.length === 2,
  );
  t.deepEqual(trailers.map((r) => [r.stream!.id, r.trailers!.status!.code]).sort(), [
    [7, Status.UNIMPLEMENTED],
    [8, Status.UNIMPLEMENTED],
  ]);
});

test('garbage frames and a message before headers are dropped, and the channel keeps serving', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  s.raw({ stream: { id: 3 }, message: { hasMessage: true, packetMessage: { data: Buffer.from('{"text":"x"}'), eom: true }, eos: true } });
  // Not a Request at all, and a Request without a stream.
  s.rawBytes(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
  s.raw({ rstStream: true });
  await eventually(
    () => s.dropped.length,
    (n) => n >= 3,
  );
  t.true(s.dropped.some((r) => /message before headers/.test(r)));
  t.true(s.dropped.some((r) => /not a Request/.test(r)));
  t.is(s.responses.length, 0, 'nothing answers a dropped frame');
  t.deepEqual(await unary((cb) => s.client.echo({ text: 'still here' }, new Metadata(), {}, cb)), { text: 'still here', who: null });
});

test('a 33 MiB request is refused with RESOURCE_EXHAUSTED and the handler never sees it', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  s.raw({ stream: { id: 5 }, headers: { method: '/test.Echo/Echo', metadata: { md: {} } } });
  const chunk = Buffer.alloc(MAX_PACKET_BYTES, 0x20);
  for (let sent = 0; sent < 33 * 1024 * 1024; sent += chunk.length) {
    s.raw({ stream: { id: 5 }, message: { hasMessage: true, packetMessage: { data: chunk, eom: false }, eos: false } });
  }
  const trailers = await eventually(
    () => s.responses.find((r) => r.trailers),
    (r) => r !== undefined,
  );
  t.is(trailers!.stream!.id, 5);
  t.is(trailers!.trailers!.status!.code, Status.RESOURCE_EXHAUSTED);
  t.regex(trailers!.trailers!.status!.message, /larger than 33554432 bytes/);
});

test('unfinished requests are bounded across the calls of a channel: the call that pushes over ends RESOURCE_EXHAUSTED', async (t) => {
  const s = await setup({ maxPartialBytes: 3 * MAX_PACKET_BYTES });
  t.teardown(s.teardown);
  const chunk = Buffer.alloc(MAX_PACKET_BYTES, 0x20);
  const packet = (id: number, eom = false) => s.raw({ stream: { id }, message: { hasMessage: true, packetMessage: { data: chunk, eom }, eos: false } });
  for (const id of [1, 3, 5]) s.raw({ stream: { id }, headers: { method: '/test.Echo/Hang', metadata: { md: {} } } });
  // Each call's message is far below the message limit; together they pass the channel's bound.
  packet(1);
  packet(1);
  packet(3);
  packet(5);
  const trailers = await eventually(
    () => s.responses.find((r) => r.trailers),
    (r) => r !== undefined,
  );
  t.is(trailers!.stream!.id, 5);
  t.is(trailers!.trailers!.status!.code, Status.RESOURCE_EXHAUSTED);
  t.regex(trailers!.trailers!.status!.message, /bytes of unfinished requests on one channel/);
  // An ended call gives its bytes back: call 1 ends (rst_stream), and a new call's packets fit again.
  s.raw({ stream: { id: 1 }, rstStream: true });
  s.raw({ stream: { id: 7 }, headers: { method: '/test.Echo/Echo', metadata: { md: {} } } });
  packet(7);
  s.raw({ stream: { id: 7 }, message: { hasMessage: true, packetMessage: { data: Buffer.from('{"text":"fits"}'), eom: true }, eos: true } });
  await eventually(
    () => s.responses.filter((r) => r.trailers).length,
    (n) => n === 2,
  );
  const seven = s.responses.find((r) => r.trailers && r.stream!.id === 7)!;
  // The message (64 KiB of spaces, JSON whitespace, then the request) is answered.
  t.is(seven.trailers!.status!.code, Status.OK, seven.trailers!.status!.message);
});

test('rst_stream cancels the handler, and nothing more is sent for that stream', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  s.raw({ stream: { id: 9 }, headers: { method: '/test.Echo/Hang', metadata: { md: {} } } });
  s.raw({ stream: { id: 9 }, message: { hasMessage: true, packetMessage: { data: Buffer.from('{}'), eom: true }, eos: true } });
  await eventually(
    () => s.hangs.started,
    (n) => n === 1,
  );
  s.raw({ stream: { id: 9 }, rstStream: true });
  await eventually(
    () => s.hangs.cancelled,
    (n) => n === 1,
  );
  // A later call on the channel is answered; none of the responses is for stream 9's trailers.
  await unary((cb) => s.client.echo({ text: 'after' }, new Metadata(), {}, cb));
  t.false(s.responses.some((r) => r.stream!.id === 9 && r.trailers));
});

test('a client cancelling a call resets its stream and cancels the handler', async (t) => {
  const s = await setup();
  t.teardown(s.teardown);
  const call = new Promise<ServiceError | null>((resolve) => {
    const c = (s.client as unknown as { hang(r: unknown, md: Metadata, o: object, cb: (e: ServiceError | null) => void): { cancel(): void } }).hang(
      {},
      new Metadata(),
      {},
      resolve,
    );
    void eventually(
      () => s.hangs.started,
      (n) => n === 1,
    ).then(() => c.cancel());
  });
  t.is((await call)?.code, Status.CANCELLED);
  await eventually(
    () => s.hangs.cancelled,
    (n) => n === 1,
  );
  t.pass();
});
