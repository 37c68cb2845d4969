// The answerer's bounds under half-open offers: its places are taken before the answer is made (offers
// answered at once cannot pass the bound together), the oldest peer still connecting gives way to a new
// offer, a connected peer never does, a malformed offer is refused for what it is, and a peer that never
// connects is closed after the connect timeout.
import test from 'ava';
import { createCaller } from '../serving/webrtc/peer.js';
import { TooManyPeersError, WebRtcAnswerer, type Answered } from './answerer.js';

// Calls on a connected channel would go to this socket; no test here makes one.
const BRIDGE = 'unix:/nonexistent/platform-answerer-test.sock';

async function offerJson(): Promise<string> {
  const caller = await createCaller();
  caller.close();
  return JSON.stringify(caller.description);
}

const closed = (answered: Answered) => new Promise<void>((resolve) => answered.onClose(resolve));

test('offers answered at once never pass the bound: places are taken before the answer is made', async (t) => {
  const answerer = new WebRtcAnswerer(BRIDGE, { maxPeers: 4 });
  t.teardown(() => answerer.stop());
  const offer = await offerJson();
  const results = await Promise.allSettled(Array.from({ length: 12 }, () => answerer.answer(offer)));
  t.is(results.filter((r) => r.status === 'fulfilled').length, 4);
  for (const r of results) if (r.status === 'rejected') t.true(r.reason instanceof TooManyPeersError);
  t.is(answerer.peerCount, 4);
});

test('the oldest peer still connecting gives way to a new offer', async (t) => {
  const answerer = new WebRtcAnswerer(BRIDGE, { maxPeers: 4 });
  t.teardown(() => answerer.stop());
  const offer = await offerJson();
  const answers: Answered[] = [];
  for (let i = 0; i < 10; i++) answers.push(await answerer.answer(offer));
  t.is(answerer.peerCount, 4);
  const gone = answers.map(() => false);
  answers.forEach((answered, i) => answered.onClose(() => (gone[i] = true)));
  // The first six gave way, oldest first; the last four are held.
  await Promise.all(answers.slice(0, 6).map(closed));
  t.deepEqual(gone, [true, true, true, true, true, true, false, false, false, false]);
});

test('a connected peer is never evicted: with every place connected, a new offer is refused', async (t) => {
  const answerer = new WebRtcAnswerer(BRIDGE, { maxPeers: 1 });
  t.teardown(() => answerer.stop());
  const caller = await createCaller();
  t.teardown(() => caller.close());
  const answered = await answerer.answer(JSON.stringify(caller.description));
  caller.onCandidate((c) => c && void answered.addRemoteCandidate(c).catch(() => undefined));
  answered.onCandidate((c) => c && void caller.addRemoteCandidate(c).catch(() => undefined));
  await caller.accept(JSON.parse(answered.answer) as { type: 'answer'; sdp: string });
  await caller.channel;
  // The machine's end opens too; until it does the peer may still be taken for a connecting one.
  while (answerer.connectedCount < 1) await new Promise((r) => setTimeout(r, 20));
  const offer = await offerJson();
  await t.throwsAsync(answerer.answer(offer), { instanceOf: TooManyPeersError, message: /more than 1 WebRTC peers at once/ });
  t.is(answerer.peerCount, 1);
});

test('a malformed offer is refused for its SDP even when the house is full', async (t) => {
  const answerer = new WebRtcAnswerer(BRIDGE, { maxPeers: 1 });
  t.teardown(() => answerer.stop());
  await answerer.answer(await offerJson());
  const err = await t.throwsAsync(answerer.answer('{"type":"offer","sdp":"v=0"}'));
  t.false(err instanceof TooManyPeersError);
  t.regex(err!.message, /^sdp: lacks/);
  t.is(answerer.peerCount, 1, 'and it took no place');
});

test('a peer that never connects is closed after the connect timeout', async (t) => {
  const answerer = new WebRtcAnswerer(BRIDGE, { connectTimeoutMs: 50 });
  t.teardown(() => answerer.stop());
  const answered = await answerer.answer(await offerJson());
  t.is(answerer.peerCount, 1);
  await closed(answered);
  t.is(answerer.peerCount, 0);
});
