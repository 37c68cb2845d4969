// A program for werift-turn.test.ts: two peers in one process connect through the TURN server given as
// argv[2] (a JSON IceServer) with a relay-only caller, carry one frame, and close; or, with argv[3] =
// 'refused', a relay-only caller whose allocation fails. It then returns without process.exit: the
// process ends only if closing left no socket or timer of the relay behind.
import { answerOffer, createCaller, type IceServer } from '../../../core/serving/webrtc/peer.js';

const server = JSON.parse(process.argv[2]) as IceServer;

if (process.argv[3] === 'refused') {
  await createCaller({ iceServers: [server], relayOnly: true }).then(
    () => console.log('connected?'),
    (err: Error) => console.log(`refused: ${err.message}`),
  );
} else {
  const caller = await createCaller({ iceServers: [server], relayOnly: true });
  const machine = await answerOffer(caller.description, { iceServers: [server] });
  caller.onCandidate((c) => c && void machine.addRemoteCandidate(c).catch(() => undefined));
  machine.onCandidate((c) => c && void caller.addRemoteCandidate(c).catch(() => undefined));
  await caller.accept(machine.description);
  const [a, b] = await Promise.all([caller.channel, machine.channel]);
  const got = new Promise<Uint8Array>((resolve) => b.onFrame(resolve));
  a.send(Uint8Array.from([4, 2]));
  await got;
  console.log(`route ${JSON.stringify(await caller.route())}`);
  caller.close();
  machine.close();
  console.log('closed');
  // peer.ts ends a connection a moment after its data channel (in an unref'd timer): wait that long, so
  // that the relays are given back before the process ends.
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
