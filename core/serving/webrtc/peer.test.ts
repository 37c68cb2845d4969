import test from 'ava';
import { answerOffer, createCaller, MAX_REMOTE_CANDIDATES, parseDescription } from './peer.js';

async function connectedPair() {
  const caller = await createCaller();
  const machine = await answerOffer(caller.description);
  // Trickle both ways, as signaling would.
  caller.onCandidate((c) => c && void machine.addRemoteCandidate(c).catch(() => undefined));
  machine.onCandidate((c) => c && void caller.addRemoteCandidate(c).catch(() => undefined));
  await caller.accept(machine.description);
  const [a, b] = await Promise.all([caller.channel, machine.channel]);
  return { caller, machine, a, b };
}

test('two peers connect over a pre-negotiated data channel and carry binary frames both ways, in order', async (t) => {
  const { caller, machine, a, b } = await connectedPair();
  t.teardown(() => {
    caller.close();
    machine.close();
  });
  const atMachine: number[] = [];
  const done = new Promise<void>((resolve) =>
    b.onFrame((frame) => {
      atMachine.push(frame.length);
      if (atMachine.length === 50) resolve();
    }),
  );
  for (let i = 1; i <= 50; i++) a.send(new Uint8Array(i * 1000));
  await done;
  t.deepEqual(
    atMachine,
    Array.from({ length: 50 }, (_, i) => (i + 1) * 1000),
  );
  const back = new Promise<Uint8Array>((resolve) => a.onFrame(resolve));
  b.send(Uint8Array.from([1, 2, 3]));
  t.deepEqual([...(await back)], [1, 2, 3]);
});

test('closing one end closes the channel at the other', async (t) => {
  const { caller, machine, b } = await connectedPair();
  t.teardown(() => machine.close());
  const closed = new Promise<void>((resolve) => b.onClose(resolve));
  caller.close();
  await closed;
  t.false(b.open);
});

test('a malformed offer is refused with an error naming sdp, and a non-offer is not parsed as one', async (t) => {
  t.throws(() => parseDescription('{not json', 'offer'), { message: /^sdp: not JSON/ });
  t.throws(() => parseDescription('{"type":"answer","sdp":"v=0"}', 'offer'), { message: /^sdp: expected \{"type":"offer"/ });
  await t.throwsAsync(answerOffer({ type: 'offer', sdp: 'v=0\r\nthis is not an SDP\r\n' }), { message: /^sdp: lacks an "m=application/ });
  const caller = await createCaller();
  t.teardown(() => caller.close());
  // A real offer with its fingerprint cut off is refused too.
  const noFingerprint = caller.description.sdp.replace(/^a=fingerprint:.*$/gm, '');
  await t.throwsAsync(answerOffer({ type: 'offer', sdp: noFingerprint }), { message: 'sdp: lacks a=fingerprint' });
  await t.throwsAsync(answerOffer({ type: 'offer', sdp: `v=0${'x'.repeat(70_000)}` }), { message: /longer than 65536 bytes/ });
});

test('a connection takes a bounded number of remote candidates: past it each is refused, naming the bound', async (t) => {
  const caller = await createCaller();
  const machine = await answerOffer(caller.description);
  t.teardown(() => {
    caller.close();
    machine.close();
  });
  // Addresses of TEST-NET-1 (RFC 5737): the checks they start reach nobody.
  const candidate = (i: number) => ({
    candidate: `candidate:${i} 1 udp 2130706431 192.0.2.${1 + (i % 250)} ${10000 + i} typ host`,
    sdpMid: '0',
    sdpMLineIndex: 0,
  });
  for (let i = 0; i < MAX_REMOTE_CANDIDATES; i++) await machine.addRemoteCandidate(candidate(i));
  await t.throwsAsync(machine.addRemoteCandidate(candidate(MAX_REMOTE_CANDIDATES)), {
    message: `more than ${MAX_REMOTE_CANDIDATES} remote candidates for one connection`,
  });
});
