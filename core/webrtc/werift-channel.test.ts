// gRPC over a real werift data channel (two peers in this process): messages larger than one packet
// cross intact both ways. werift refuses a data-channel message over 65,536 bytes, so a frame carrying a
// 65,535-byte packet was refused, and a message's full packets were lost (only its tail arrived).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Client, Server, ServerCredentials, credentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { answerOffer, createCaller } from '../serving/webrtc/peer.js';
import { ChannelClient } from '../serving/webrtc/channel-client.js';
import { serveChannel } from './channel-server.js';

const passthrough = (b: Buffer) => b;
const ECHO = {
  path: '/test.Bytes/Echo',
  requestStream: false,
  responseStream: false,
  requestSerialize: passthrough,
  requestDeserialize: passthrough,
  responseSerialize: passthrough,
  responseDeserialize: passthrough,
};

test('a 300 KB request and its 300 KB answer cross real werift peers intact', async (t) => {
  t.timeout(60_000);
  const server = new Server();
  // The answer is the request reversed, so that a lost or reordered packet shows either way.
  server.addService(
    { echo: ECHO },
    { echo: (call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => cb(null, Buffer.from(call.request).reverse()) },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const target = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const caller = await createCaller();
  const machine = await answerOffer(caller.description);
  t.teardown(() => {
    caller.close();
    machine.close();
    target.close();
    server.forceShutdown();
  });
  caller.onCandidate((c) => c && void machine.addRemoteCandidate(c).catch(() => undefined));
  machine.onCandidate((c) => c && void caller.addRemoteCandidate(c).catch(() => undefined));
  await caller.accept(machine.description);
  const [callerEnd, machineEnd] = await Promise.all([caller.channel, machine.channel]);
  serveChannel(machineEnd, target);
  const channel = new ChannelClient(callerEnd);
  const client = new Client('webrtc.invalid:1', credentials.createInsecure(), { interceptors: [channel.interceptor] });
  t.teardown(() => client.close());
  const request = randomBytes(300_000);
  const answer = await new Promise<Buffer>((resolve, reject) =>
    client.makeUnaryRequest(ECHO.path, passthrough, passthrough, request, (err, res) => (err ? reject(err) : resolve(res!))),
  );
  t.is(answer.length, request.length);
  t.true(answer.equals(Buffer.from(request).reverse()));
});
