// The machine's side of WebRTC: takes an offer (from the cloud's signaling or the runtime's own), makes the
// answer, trickles candidates, and once the data channel opens serves gRPC on it through the runtime's
// gRPC server (channel-server.ts).
//
// Half-open offers cost a bounded amount: at most `maxPeers` peers are held (connecting or connected,
// counting offers still being answered), and a peer whose channel has not opened within
// `connectTimeoutMs` is closed. When the house is full, the oldest peer that is still connecting gives
// way to the new offer, as a SYN cache drops its oldest half-open entry: a flood of offers that never
// complete ICE then cannot lock legitimate callers out for the whole timeout. Connected peers are never
// evicted; when every place is held by one, the offer is refused.
import { Client, credentials } from '@grpc/grpc-js';
import { answerOffer, parseDescription, type IceCandidate, type IceServer, type Peer } from '../serving/webrtc/peer.js';
import { serveChannel } from './channel-server.js';

/** A peer whose data channel has not opened by then is closed (default of `connectTimeoutMs`). */
export const CONNECT_TIMEOUT_MS = 30_000;
/** Peers (connecting or connected) held at once (default of `maxPeers`). */
export const MAX_PEERS = 128;
/** The setting that shortens or lengthens CONNECT_TIMEOUT_MS (tests of the flood use a short one). */
export const CONNECT_TIMEOUT_SETTING = 'PLATFORM_WEBRTC_CONNECT_TIMEOUT_MS';

export interface AnswererOptions {
  connectTimeoutMs?: number;
  maxPeers?: number;
}

export interface Answered {
  /** The answer, JSON-encoded ({"type":"answer","sdp":...}). */
  answer: string;
  onCandidate(listener: (candidate: IceCandidate | undefined) => void): void;
  addRemoteCandidate(candidate: IceCandidate): Promise<void>;
  /** Called once the peer is closed (timed out, evicted, failed, or its channel closed). */
  onClose(listener: () => void): void;
  close(): void;
}

/** The error of an offer refused because every place is held by a connected peer. */
export class TooManyPeersError extends Error {}

interface Held {
  peer: Peer;
  connected: boolean;
}

export class WebRtcAnswerer {
  private readonly bridge: Client;
  /** In the order they were made: the first still connecting is the one evicted. */
  private readonly peers = new Set<Held>();
  /** Offers being answered now: their places are taken before the answer is made. */
  private answering = 0;
  private stopped = false;
  private readonly connectTimeoutMs: number;
  private readonly maxPeers: number;

  /** `bridgeAddress`: the runtime gRPC server's private socket (runtime-server.ts). */
  constructor(bridgeAddress: string, options: AnswererOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.maxPeers = options.maxPeers ?? MAX_PEERS;
    this.bridge = new Client(bridgeAddress, credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.max_send_message_length': 64 * 1024 * 1024,
    });
  }

  /** Peers held now, connecting or connected. */
  get peerCount(): number {
    return this.peers.size;
  }

  /** Peers whose data channel is open. */
  get connectedCount(): number {
    return [...this.peers].filter((held) => held.connected).length;
  }

  /** Makes room for one more peer: evicts the oldest still connecting, or refuses when all are connected. */
  private makeRoom(): void {
    if (this.peers.size + this.answering < this.maxPeers) return;
    for (const held of this.peers) {
      if (!held.connected) {
        // Closing ends the peer at once (peer.ts), and its onClose takes it out of the set.
        held.peer.close();
        this.peers.delete(held);
        return;
      }
    }
    throw new TooManyPeersError(`more than ${this.maxPeers} WebRTC peers at once: try again later`);
  }

  /** Answers a JSON-encoded offer. Throws with a message naming the problem for a bad offer or a full house. */
  async answer(offerJson: string, iceServers: IceServer[] = []): Promise<Answered> {
    if (this.stopped) throw new Error('the runtime is stopping');
    // A malformed offer is refused for what it is, before it takes (or frees) a place.
    const offer = parseDescription(offerJson, 'offer');
    this.makeRoom();
    this.answering++;
    let peer: Peer;
    try {
      peer = await answerOffer(offer, { iceServers });
    } finally {
      this.answering--;
    }
    if (this.stopped) {
      peer.close();
      throw new Error('the runtime is stopping');
    }
    const held: Held = { peer, connected: false };
    this.peers.add(held);
    const giveUp = setTimeout(() => peer.close(), this.connectTimeoutMs);
    giveUp.unref();
    peer.onClose(() => {
      clearTimeout(giveUp);
      this.peers.delete(held);
    });
    peer.channel.then(
      (channel) => {
        clearTimeout(giveUp);
        held.connected = true;
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
      onClose: (listener) => peer.onClose(listener),
      close: () => peer.close(),
    };
  }

  stop(): void {
    this.stopped = true;
    for (const held of [...this.peers]) held.peer.close();
    this.bridge.close();
  }
}
