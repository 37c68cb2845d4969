// The cloud's SignalingService bounds what half-open offers hold: at most MAX_CALLS_PER_MACHINE offers
// wait on one machine (not answered yet), and answered calls whose callers never finish (no CallUpdate
// done, as a flood of half-open offers does) no longer count as waiting: they cannot lock every other
// caller out for the call's lifetime. They are bounded on their own (MAX_RELAYING_PER_MACHINE, the oldest
// ends), and so are a part's Answer streams (MAX_ANSWERERS_PER_PART). The machine is a stand-in holding Answer over gRPC as machine A1's part (no WebRTC here; the
// flood against the real programs is scripts/e2e/webrtc-offer-flood.test.ts).
import test from 'ava';
import { credentials, type ClientDuplexStream, type Metadata, type ServiceError } from '@grpc/grpc-js';
import { SignalingServiceClient, type AnswerRequest, type AnswerResponse, type CallResponse } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { MAX_ANSWERERS_PER_PART, MAX_CALLS_PER_MACHINE, MAX_RELAYING_PER_MACHINE } from './signaling-service.js';

const OFFER = JSON.stringify({
  type: 'offer',
  sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\na=fingerprint:sha-256 AB:CD:EF\r\na=setup:actpass\r\na=mid:0\r\na=sctp-port:5000\r\n',
});
const ANSWER = JSON.stringify({ type: 'answer', sdp: 'v=0\r\n' });

let fx: CloudFixture;
let signaling: SignalingServiceClient;
let callerMd: Metadata;

test.before(async () => {
  fx = await startFixture();
  signaling = new SignalingServiceClient(fx.cloud.address, credentials.createInsecure());
  callerMd = await fx.client(fx.keys.operatorA).connection.metadata();
  callerMd.set('rpc-host', fx.machineA1.part_id);
});
test.after.always(async () => {
  signaling?.close();
  await fx?.close();
});

/** Machine A1's stand-in: holds Answer as its part; `answerEach` answers every offer it is sent (init, then done). */
async function standIn(answerEach: boolean) {
  const part = fx.partClient(fx.machineA1);
  const client = new SignalingServiceClient(part.connection.address, credentials.createInsecure());
  const stream: ClientDuplexStream<AnswerResponse, AnswerRequest> = client.answer(await part.connection.metadata());
  stream.on('error', () => undefined);
  const offers: string[] = [];
  stream.on('data', (request: AnswerRequest) => {
    if (!request.init) return;
    offers.push(request.uuid);
    if (answerEach) {
      stream.write({ uuid: request.uuid, init: { sdp: ANSWER } });
      stream.write({ uuid: request.uuid, done: {} });
    }
  });
  const ended = new Promise<void>((resolve) => stream.on('status', () => resolve()));
  return {
    offers,
    /** Resolves when the cloud ended the Answer stream. */
    ended,
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}

/** One Call: resolves with the first message (the answer) or the error; the stream is left as it is. */
function offer(): { first: Promise<CallResponse | ServiceError>; cancel(): void } {
  const stream = signaling.call({ sdp: OFFER, disableTrickle: false }, callerMd, { deadline: Date.now() + 30_000 });
  const first = new Promise<CallResponse | ServiceError>((resolve) => {
    stream.once('data', resolve);
    stream.on('error', resolve);
  });
  return { first, cancel: () => stream.cancel() };
}

const isError = (r: CallResponse | ServiceError): r is ServiceError => 'code' in r;

/** Offers until the stand-in's Answer stream is registered (UNAVAILABLE until then). */
async function firstAnswered(): Promise<CallResponse> {
  for (;;) {
    const reply = await offer().first;
    if (!isError(reply)) return reply;
    if (reply.code !== 14) throw reply;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('offers the machine has not answered are bounded: one more than the bound is RESOURCE_EXHAUSTED, naming it', async (t) => {
  const machine = await standIn(false);
  t.teardown(() => machine.close());
  // The stand-in never answers: each offer waits (until its caller gives up or 10 s pass). The first is
  // sent again until the Answer stream is registered (UNAVAILABLE until then).
  const pending: ReturnType<typeof offer>[] = [];
  t.teardown(() => pending.forEach((p) => p.cancel()));
  while (machine.offers.length === 0) {
    const attempt = offer();
    pending.push(attempt);
    for (;;) {
      const early = await Promise.race([attempt.first, new Promise((r) => setTimeout(r, 50, 'waiting'))]);
      if (early === 'waiting' && machine.offers.length === 0) continue;
      if (early !== 'waiting' && (early as ServiceError).code !== 14) throw new Error(`the first offer was refused: ${(early as ServiceError).message}`);
      break;
    }
  }
  const waiting = Array.from({ length: MAX_CALLS_PER_MACHINE - 1 }, offer);
  t.teardown(() => waiting.forEach((w) => w.cancel()));
  while (machine.offers.length < MAX_CALLS_PER_MACHINE) await new Promise((r) => setTimeout(r, 20));
  const refused = await offer().first;
  t.true(isError(refused));
  t.is((refused as ServiceError).code, 8);
  t.regex((refused as ServiceError).details, new RegExp(`more than ${MAX_CALLS_PER_MACHINE} offers are waiting`));
});

test.serial('answered offers whose callers never finish do not lock other callers out; the oldest of them ends past their own bound', async (t) => {
  const machine = await standIn(true);
  t.teardown(() => machine.close());
  const first = await firstAnswered();
  t.is(first.init?.sdp, ANSWER);
  // MAX_RELAYING_PER_MACHINE answered, half-open calls in all: many more than the waiting bound.
  for (let i = 1; i < MAX_RELAYING_PER_MACHINE; i++) {
    const reply = await offer().first;
    t.false(isError(reply), isError(reply) ? reply.details : '');
  }
  // The first call still relays the caller's candidates.
  const update = (uuid: string) =>
    new Promise<ServiceError | null>((resolve) =>
      signaling.callUpdate({ uuid, candidate: { candidate: 'candidate:1 1 udp 1 192.0.2.9 5000 typ host', sdpMid: '0', sdpmLineIndex: 0 } }, callerMd, (err) =>
        resolve(err),
      ),
    );
  t.is(await update(first.uuid), null);
  // One more answered call: the oldest gives way, and a caller learns its call is over.
  const last = await offer().first;
  t.false(isError(last));
  const gone = await update(first.uuid);
  t.is(gone?.code, 5);
  t.regex(gone?.details ?? '', /no call/);
  t.is(await update((last as CallResponse).uuid), null);
});

test.serial("a part's Answer streams are bounded: past the bound the oldest is ended, and offers go to the newest", async (t) => {
  const machines = [];
  for (let i = 0; i <= MAX_ANSWERERS_PER_PART; i++) {
    const machine = await standIn(true);
    t.teardown(() => machine.close());
    machines.push(machine);
    // Registered (offers reach it, the newest) before the next one opens.
    while (machine.offers.length === 0) await firstAnswered();
  }
  await machines[0].ended;
  t.pass('the oldest Answer stream was ended by the cloud');
});
