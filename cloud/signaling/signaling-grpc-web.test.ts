// The cloud's SignalingService over gRPC-Web, as a browser calls it: through the cloud's web port, with
// the signed-in key's token and rpc-host as request headers, Call read as a stream of gRPC-Web frames
// while it is open. The machine's side is a stand-in holding Answer over gRPC as machine A1's part, so
// the test sees exactly what the cloud relays each way (no WebRTC here; the browser end to end with a
// real machine is scripts/e2e/webrtc-control-page.browser.test.ts).
import test from 'ava';
import { credentials, type ClientDuplexStream } from '@grpc/grpc-js';
import {
  AnswerRequest,
  CallRequest,
  CallResponse,
  CallUpdateRequest,
  OptionalWebRTCConfigRequest,
  OptionalWebRTCConfigResponse,
  SignalingServiceClient,
  type AnswerResponse,
} from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { frame } from '../../core/serving/web/grpc-web.js';
import { startFixture, type CloudFixture, type Key } from '../testing/tenancy-fixture.js';

const SIGNALING = '/platform.rpc.webrtc.v1.SignalingService';
const ICE_SERVERS = [{ urls: ['turn:127.0.0.1:3478'], username: 'u', credential: 'c' }];
/** The smallest offer the cloud takes: a data-channel section, ICE credentials and a fingerprint. */
const OFFER = JSON.stringify({
  type: 'offer',
  sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\na=fingerprint:sha-256 AB:CD:EF\r\na=setup:actpass\r\na=mid:0\r\na=sctp-port:5000\r\n',
});
const ANSWER = JSON.stringify({ type: 'answer', sdp: 'v=0\r\n' });

let fx: CloudFixture;
let tokens: Map<string, string>;
test.before(async () => {
  fx = await startFixture({ PLATFORM_WEBRTC_ICE_SERVERS: JSON.stringify(ICE_SERVERS) });
  tokens = new Map();
});
test.after.always(async () => {
  await fx?.close();
});

async function bearer(key: Key): Promise<string> {
  if (!tokens.has(key.id)) tokens.set(key.id, (await fx.client(key).connection.metadata()).get('authorization')[0] as string);
  return tokens.get(key.id)!;
}

interface Frames {
  messages: Uint8Array[];
  status: number;
  detail: string;
}

/**
 * A gRPC-Web call through the cloud's web port; `onMessage` sees each message as its frame arrives (a
 * server stream is read while it is open). Resolves with every message and the trailers' status.
 */
async function grpcWeb(path: string, message: Uint8Array, headers: Record<string, string>, onMessage?: (m: Uint8Array) => void): Promise<Frames> {
  const response = await fetch(new URL(path, fx.cloud.webUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/grpc-web+proto', ...headers },
    body: frame(0, message),
  });
  const out: Frames = { messages: [], status: -1, detail: '' };
  let buffered = new Uint8Array(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const joined = new Uint8Array(buffered.length + chunk.length);
    joined.set(buffered);
    joined.set(chunk, buffered.length);
    let at = 0;
    while (at + 5 <= joined.length) {
      const length = new DataView(joined.buffer, at + 1, 4).getUint32(0);
      if (at + 5 + length > joined.length) break;
      const payload = joined.slice(at + 5, at + 5 + length);
      if (joined[at] === 0) {
        out.messages.push(payload);
        onMessage?.(payload);
      } else {
        const text = new TextDecoder().decode(payload);
        out.status = Number(/grpc-status: ?(\d+)/.exec(text)?.[1]);
        out.detail = decodeURIComponent(/grpc-message: ?(.*)\r\n/.exec(text)?.[1] ?? '');
      }
      at += 5 + length;
    }
    buffered = joined.slice(at);
  }
  return out;
}

/** Machine A1's stand-in: holds Answer as its part and queues what the cloud relays to it. */
async function standIn(t: { teardown(fn: () => void): void }) {
  const part = fx.partClient(fx.machineA1);
  const client = new SignalingServiceClient(part.connection.address, credentials.createInsecure());
  const md = await part.connection.metadata();
  const stream: ClientDuplexStream<AnswerResponse, AnswerRequest> = client.answer(md);
  stream.on('error', () => undefined);
  const received: AnswerRequest[] = [];
  const waiters: (() => void)[] = [];
  stream.on('data', (request: AnswerRequest) => {
    received.push(request);
    for (const w of waiters.splice(0)) w();
  });
  t.teardown(() => {
    stream.cancel();
    client.close();
  });
  return {
    stream,
    /** The next request the cloud relayed (those already queued first). */
    next: async (): Promise<AnswerRequest> => {
      while (received.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return received.shift()!;
    },
  };
}

const call = (headers: Record<string, string>, onMessage?: (m: Uint8Array) => void) =>
  grpcWeb(`${SIGNALING}/Call`, CallRequest.encode({ sdp: OFFER, disableTrickle: false }).finish(), headers, onMessage);

test.serial("a browser's Call and CallUpdate over gRPC-Web reach the answering machine, and its answer and candidates come back on the stream", async (t) => {
  const machine = await standIn(t);
  const headers = { authorization: await bearer(fx.keys.operatorA), 'rpc-host': fx.machineA1.part_id };
  // The Answer stream registers asynchronously: until then the cloud says the machine is not answering.
  const seen: CallResponse[] = [];
  let result: Promise<Frames> | undefined;
  const relayed = machine.next();
  for (;;) {
    result = call(headers, (m) => seen.push(CallResponse.decode(m)));
    const first = await Promise.race([result, relayed]);
    if ('init' in first && first.init) {
      t.is(first.init.sdp, OFFER);
      t.deepEqual(first.init.optionalConfig?.additionalIceServers, ICE_SERVERS);
      const { uuid } = first;
      machine.stream.write({ uuid, init: { sdp: ANSWER } });
      machine.stream.write({ uuid, update: { candidate: { candidate: 'candidate:1 1 udp 1 192.0.2.9 5000 typ host', sdpMid: '0', sdpmLineIndex: 0 } } });
      machine.stream.write({ uuid, done: {} });
      break;
    }
    t.is((first as Frames).status, 14, (first as Frames).detail);
  }
  const ended = await result;
  t.is(ended.status, 0, ended.detail);
  t.is(seen[0].init?.sdp, ANSWER);
  t.is(seen[1].update?.candidate?.candidate, 'candidate:1 1 udp 1 192.0.2.9 5000 typ host');
  const uuid = seen[0].uuid;

  // The browser trickles its own candidate, then its end of candidates, with unary CallUpdate.
  const update = (request: Partial<CallUpdateRequest>, h = headers) =>
    grpcWeb(`${SIGNALING}/CallUpdate`, CallUpdateRequest.encode(CallUpdateRequest.fromPartial({ uuid, ...request })).finish(), h);
  const candidate = { candidate: 'candidate:2 1 udp 2 192.0.2.10 6000 typ host', sdpMid: '0', sdpmLineIndex: 0 };
  t.is((await update({ candidate })).status, 0);
  t.deepEqual((await machine.next()).update?.candidate, { ...candidate, usernameFragment: undefined });
  // A key of another organization learns nothing of the call.
  const stranger = await update({ candidate }, { authorization: await bearer(fx.keys.ownerB), 'rpc-host': fx.machineA1.part_id });
  t.is(stranger.status, 7, stranger.detail);
  t.is((await update({ done: true })).status, 0);
  t.deepEqual((await machine.next()).done, {});
  const after = await update({ candidate });
  t.is(after.status, 5, 'the call is over once the browser said done');
  t.regex(after.detail, /no call/);
});

test.serial('over gRPC-Web the cloud refuses a Call without a token, from another organization, to an unknown or silent part, each in its words', async (t) => {
  const operator = await bearer(fx.keys.operatorA);
  const anonymous = await call({ 'rpc-host': fx.machineA1.part_id });
  t.is(anonymous.status, 16, anonymous.detail);
  const stranger = await call({ authorization: await bearer(fx.keys.ownerB), 'rpc-host': fx.machineA1.part_id });
  t.is(stranger.status, 7, stranger.detail);
  // rpc-host travels from the request's headers: an unknown part is named, not "rpc-host required".
  const unknown = await call({ authorization: operator, 'rpc-host': 'no-such-part' });
  t.is(unknown.status, 5, unknown.detail);
  t.regex(unknown.detail, /rpc-host: machine part no-such-part does not exist/);
  const missing = await call({ authorization: operator });
  t.is(missing.status, 3);
  t.regex(missing.detail, /rpc-host metadata: required/);
  const silent = await call({ authorization: operator, 'rpc-host': fx.machineA2.part_id });
  t.is(silent.status, 14, silent.detail);
  t.regex(silent.detail, /is not answering/);
  for (const reply of [anonymous, stranger, unknown, silent]) t.deepEqual(reply.messages, []);
});

test.serial('OptionalWebRTCConfig over gRPC-Web hands the ICE servers (TURN credentials) to a signed-in caller only', async (t) => {
  const path = `${SIGNALING}/OptionalWebRTCConfig`;
  const request = OptionalWebRTCConfigRequest.encode({}).finish();
  const ok = await grpcWeb(path, request, { authorization: await bearer(fx.keys.operatorA), 'rpc-host': fx.machineA1.part_id });
  t.is(ok.status, 0, ok.detail);
  t.deepEqual(OptionalWebRTCConfigResponse.decode(ok.messages[0]).config?.additionalIceServers, ICE_SERVERS);
  const anonymous = await grpcWeb(path, request, {});
  t.is(anonymous.status, 16);
  t.deepEqual(anonymous.messages, []);
});
