// The gRPC-Web forwarder in process, against a gRPC server of the test's own (issue 27): bodies share
// one budget of bytes, forwarded headers are bounded, and a connection that a server wedged (a status
// over 64 KiB, which stops Node's HTTP/2 client from reading it) is dropped and replaced, so the calls
// after it work. Refusals past an address's allowance wait for their answer (refusal-pacer.ts).
import test from 'ava';
import { Server, ServerCredentials, status, type ServiceError, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../testing/eventually.js';
import { grpcWebCall, hostilePost } from '../testing/web-attacks.js';
import { FORWARDER_CHANNEL_OPTIONS, GrpcWebForwarder, type MethodTable } from './grpc-web.js';
import { RefusalPacer } from '../refusal-pacer.js';
import type { WebLimits } from './request-body.js';
import { startWebServer, type WebServer } from './web-server.js';

const MiB = 1024 * 1024;
const identity = (b: Buffer) => b;
const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});

/** A server with no bounds of its own: Echo answers its request, Fail fails with the request as its message. */
async function rawServer(): Promise<{ address: string; stop(): void }> {
  const server = new Server();
  server.addService(
    { echo: method('/t.T/Echo'), fail: method('/t.T/Fail') },
    {
      echo: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => callback(null, call.request),
      fail: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) =>
        callback({ code: status.NOT_FOUND, details: `no such thing ${call.request.toString()}` } as ServiceError),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

const table: MethodTable = new Map([
  ['/t.T/Echo', { requestStream: false, responseStream: false }],
  ['/t.T/Fail', { requestStream: false, responseStream: false }],
]);

async function webPort(
  address: string,
  limits: WebLimits,
  channelOptions = FORWARDER_CHANNEL_OPTIONS,
  refusals?: RefusalPacer,
): Promise<{ web: WebServer; forwarder: GrpcWebForwarder }> {
  const forwarder = new GrpcWebForwarder(() => ({ address }), table, limits, channelOptions, refusals);
  const web = await startWebServer({
    bindAddress: '127.0.0.1:0',
    assetsDir: mkdtempSync(join(tmpdir(), 'platform-web-')),
    profiling: false,
    forwarder,
    allowedHosts: [],
    onError: () => {},
  });
  return { web, forwarder };
}

const LIMITS: WebLimits = { maxRequestBytes: 2 * MiB, maxInflightBytes: 3 * MiB, maxHeaderValueBytes: 8192 };

test('bodies being read share one budget: past it a call is RESOURCE_EXHAUSTED naming the variable; the held call still goes through', async (t) => {
  const server = await rawServer();
  const { web, forwarder } = await webPort(server.address, LIMITS);
  t.teardown(async () => {
    await web.stop();
    server.stop();
  });
  // A: a 2 MiB frame of which 1.5 MiB are sent, then held.
  const url = new URL('/t.T/Echo', web.url);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(2 * MiB, 1);
  let resolveA!: (body: Buffer) => void;
  const answerA = new Promise<Buffer>((resolve) => (resolveA = resolve));
  const a = request(
    { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' } },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolveA(Buffer.concat(chunks)));
    },
  );
  a.write(head);
  a.write(Buffer.alloc(1.5 * MiB, 7));
  await eventually(
    () => forwarder.inflightBytes,
    (held) => held >= 1.5 * MiB,
    { what: 'the first body to arrive' },
  );
  // B: a whole 2 MiB frame, past the 3 MiB budget while A is held.
  const b = await hostilePost(web.url, '/t.T/Echo', { announce: 2 * MiB, sendBytes: 2 * MiB });
  t.is(b.code, status.RESOURCE_EXHAUSTED);
  t.regex(b.detail, /already holding \d+ bytes of request bodies, its limit \(PLATFORM_WEB_MAX_INFLIGHT_BYTES=3145728\); try again shortly/);
  a.end(Buffer.alloc(0.5 * MiB, 7));
  const body = await answerA;
  t.is(body.readUInt32BE(1), 2 * MiB, 'A is answered with its own 2 MiB');
  t.is(forwarder.inflightBytes, 0);
});

test('a forwarded header over its limit is refused naming the header and the limit', async (t) => {
  const server = await rawServer();
  const { web } = await webPort(server.address, LIMITS);
  t.teardown(async () => {
    await web.stop();
    server.stop();
  });
  const refused = await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('hi'), { authorization: `Bearer ${'t'.repeat(9000)}` });
  t.is(refused.code, status.INVALID_ARGUMENT);
  t.regex(refused.detail, /^header authorization: 9007 bytes; at most 8192 are forwarded \(PLATFORM_WEB_MAX_HEADER_BYTES\)$/);
  t.is((await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('hi'), { authorization: 'Bearer ok' })).code, 0);
});

test('a server that sends a 100 KiB status wedges the connection; the forwarder drops it and the next calls work', async (t) => {
  const server = await rawServer();
  // Short keepalive for the test (the default is 20 s + 10 s); the mechanism is the same.
  const { web } = await webPort(server.address, LIMITS, { ...FORWARDER_CHANNEL_OPTIONS, 'grpc.keepalive_time_ms': 500, 'grpc.keepalive_timeout_ms': 500 });
  t.teardown(async () => {
    await web.stop();
    server.stop();
  });
  t.is((await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('before'))).code, 0);
  const wedged = await grpcWebCall(web.url, '/t.T/Fail', Buffer.from('x'.repeat(100 * 1024)));
  t.not(wedged.code, 0);
  t.true(wedged.detail.length < 4200, 'whatever came back is bounded too');
  const after = await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('after'));
  t.is(after.code, 0, after.detail);
  t.is(after.reply?.toString(), 'after');
});

test('refusals past an address allowance wait for their answer with their body unread; another address is answered at once', async (t) => {
  const server = await rawServer();
  // Two refusals free, then a wait far longer than the test.
  const pacer = new RefusalPacer({ freePerWindow: 2, stepMs: 600_000, maxDelayMs: 600_000 });
  const { web } = await webPort(server.address, LIMITS, FORWARDER_CHANNEL_OPTIONS, pacer);
  t.teardown(async () => {
    await web.stop();
    server.stop();
  });
  for (let i = 0; i < 2; i++) t.is((await grpcWebCall(web.url, '/t.T/Nope', Buffer.from('x'))).code, status.UNIMPLEMENTED);
  // The third refusal of 127.0.0.1: a 1 GiB frame announced, 8 MiB offered; it is held, not answered.
  const url = new URL('/t.T/Echo', web.url);
  let answered = false;
  const held = request(
    { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' } },
    () => {
      answered = true;
    },
  );
  held.on('error', () => {});
  const head = Buffer.alloc(5);
  head.writeUInt32BE(1024 * MiB, 1);
  held.write(head);
  held.write(Buffer.alloc(8 * MiB));
  await eventually(
    () => pacer.heldFor('127.0.0.1'),
    (n) => n === 1,
    { what: 'the third refusal of 127.0.0.1 to be held' },
  );
  // Its body stays unread while it waits: the sender stalls once the kernel's buffers are full, long
  // before 64 MiB more (a body read and thrown away would take all of it at once).
  let accepted = 0;
  const chunk = Buffer.alloc(MiB);
  while (accepted < 64 * MiB) {
    if (held.write(chunk)) {
      accepted += MiB;
      continue;
    }
    const drained = await Promise.race([
      new Promise<boolean>((resolve) => held.once('drain', () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000)),
    ]);
    if (!drained) break;
    accepted += MiB;
  }
  t.true(accepted < 64 * MiB, `the held request's body was read on: ${accepted / MiB} MiB more went in`);
  // Another browser's refusal and call are answered meanwhile.
  t.is((await grpcWebCall(web.url, '/t.T/Nope', Buffer.from('x'), {}, '127.0.0.2')).code, status.UNIMPLEMENTED);
  t.is((await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('hi'), {}, '127.0.0.2')).code, 0);
  // Answered calls of the paced address are not held: only refusals count.
  t.is((await grpcWebCall(web.url, '/t.T/Echo', Buffer.from('hi'))).code, 0);
  t.false(answered, 'the held refusal is still waiting');
  t.is(pacer.heldFor('127.0.0.1'), 1);
  // (Its socket is not read while it waits, so a caller that goes away is seen when the wait ends.)
  held.destroy();
});
