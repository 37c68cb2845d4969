// The machine's side of WebRTC: takes an offer (from the cloud's signaling or the runtime's own), makes the
// answer, trickles candidates, and once the data channel opens serves gRPC on it through the runtime's
// gRPC server (channel-server.ts). Peers that never connect are closed after CONNECT_TIMEOUT_MS, and at
// most MAX_PEERS are held, so thousands of half-open offers cost a bounded amount.
import { Client, credentials } from '@grpc/grpc-js';
import { answerOffer, parseDescription, type IceCandidate, type IceServer, type Peer } from '../serving/webrtc/peer.js';
import { serveChannel } from './channel-server.js';

/** A peer whose data channel has not opened by then is closed. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** Peers (connecting or connected) held at once; an offer beyond that is refused. */
export const MAX_PEERS = 128;

export interface Answered {
  /** The answer, JSON-encoded ({"type":"answer","sdp":...}). */
  answer: string;
  onCandidate(listener: (candidate: IceCandidate | undefined) => void): void;
  addRemoteCandidate(candidate: IceCandidate): Promise<void>;
  close(): void;
}

export class WebRtcAnswerer {
  private readonly bridge: Client;
  private readonly peers = new Set<Peer>();
  private stopped = false;

  /** `bridgeAddress`: the runtime gRPC server's private socket (runtime-server.ts). */
  constructor(bridgeAddress: string) {
    this.bridge = new Client(bridgeAddress, credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.max_send_message_length': 64 * 1024 * 1024,
    });
  }

  get peerCount(): number {
    return this.peers.size;
  }

  /** Answers a JSON-encoded offer. Throws with a message naming the problem for a bad offer or a full house. */
  async answer(offerJson: string, iceServers: IceServer[] = []): Promise<Answered> {
    if (this.stopped) throw new Error('the runtime is stopping');
    if (this.peers.size >= MAX_PEERS) throw new Error(`more than ${MAX_PEERS} WebRTC peers at once: try again later`);
    const offer = parseDescription(offerJson, 'offer');
    const peer = await answerOffer(offer, { iceServers });
    this.peers.add(peer);
    const giveUp = setTimeout(() => peer.close(), CONNECT_TIMEOUT_MS);
    giveUp.unref();
    peer.onClose(() => {
      clearTimeout(giveUp);
      this.peers.delete(peer);
    });
    peer.channel.then(
      (channel) => {
        clearTimeout(giveUp);
        const served = serveChannel(channel, this.bridge);
        peer.onClose(() => served.close());
        channel.onClose(() => peer.close());
      },
      () => peer.close(),
    );
    return {
      answer: JSON.stringify(peer.description),
      onCandidate: (listener) => peer.onCandidate(listener),
      addRemoteCandidate: (candidate) => peer.addRemoteCandidate(candidate),
      close: () => peer.close(),
    };
  }

  stop(): void {
    this.stopped = true;
    for (const peer of [...this.peers]) peer.close();
    this.bridge.close();
  }
}
