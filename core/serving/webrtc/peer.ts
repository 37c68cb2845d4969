// The one module that knows werift (a WebRTC stack in TypeScript). Everything else sees a Peer: a local
// description to send, the remote one and candidates to take, its own candidates as they are found, and
// the data channel gRPC runs on. The channel is pre-negotiated (id 0, ordered, reliable) so that neither
// end waits for the other to announce it. Descriptions travel JSON-encoded ({"type","sdp"}).
// werift is loaded on the first peer connection, not with this module: a runtime that never sees an offer
// does not evaluate it (in platform-micro-server's single-file bundle esbuild keeps the dynamic import
// inside the file, run on first use: 5.5 MB less resident at start, core/micro/README.md).
import type { RTCPeerConnection, RTCDataChannel } from 'werift';
import type { FrameChannel } from './frame-channel.js';

export interface IceServer {
  urls: string[];
  username?: string;
  credential?: string;
}

export interface PeerOptions {
  iceServers?: IceServer[];
  /** Use TURN relays only (iceTransportPolicy "relay"). */
  relayOnly?: boolean;
}

export interface SessionDescription {
  type: 'offer' | 'answer';
  sdp: string;
}

export interface IceCandidate {
  candidate: string;
  sdpMid?: string;
  sdpMLineIndex?: number;
  usernameFragment?: string;
}

/** One end of the candidate pair ICE selected: a relay (TURN), host, srflx or prflx candidate. */
export interface RouteEnd {
  type: string;
  address: string;
  port: number;
}

/** The candidate pair the connection runs on, and what went over it. */
export interface Route {
  local: RouteEnd;
  remote: RouteEnd;
  bytesSent: number;
  bytesReceived: number;
}

export interface Peer {
  /** This end's offer (caller) or answer (machine). */
  readonly description: SessionDescription;
  /** Each local candidate as it is gathered, then undefined when gathering is complete (replayed to a late listener). */
  onCandidate(listener: (candidate: IceCandidate | undefined) => void): void;
  addRemoteCandidate(candidate: IceCandidate): Promise<void>;
  /** Resolves with the data channel once it is open; rejects if the connection fails or closes first. */
  readonly channel: Promise<FrameChannel>;
  /** Called once when the connection fails or closes. */
  onClose(listener: () => void): void;
  /** The selected candidate pair, from the connection's stats; undefined before ICE has selected one. */
  route(): Promise<Route | undefined>;
  close(): void;
}

export interface CallerPeer extends Peer {
  /** Takes the machine's answer. */
  accept(answer: SessionDescription): Promise<void>;
}

export const DATA_CHANNEL_LABEL = 'data';

/** Parses a JSON-encoded description, naming what is wrong with bad input. */
export function parseDescription(json: string, expected: SessionDescription['type']): SessionDescription {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error(`sdp: not JSON (expected {"type":"${expected}","sdp":"..."})`);
  }
  const d = parsed as Partial<SessionDescription> | null;
  if (!d || typeof d !== 'object' || d.type !== expected || typeof d.sdp !== 'string') {
    throw new Error(`sdp: expected {"type":"${expected}","sdp":"v=0..."}`);
  }
  checkSdp(d.sdp);
  return { type: expected, sdp: d.sdp };
}

/** The largest SDP accepted: a data-channel offer is a few KB even with many candidates. */
export const MAX_SDP_BYTES = 64 * 1024;

/**
 * Remote candidates one connection takes; more are refused. Each is paired with every local candidate and
 * checked with STUN requests to the address it names, so without a bound a caller could make the machine
 * send checks to any number of addresses of its choosing. A real peer has a few per network interface.
 */
export const MAX_REMOTE_CANDIDATES = 64;

/**
 * Checks that an SDP can carry the data channel, before any WebRTC state is made for it: werift answers
 * almost any text, so a hostile offer would otherwise hold a peer connection until it times out.
 */
export function checkSdp(sdp: string): void {
  if (sdp.length > MAX_SDP_BYTES) throw new Error(`sdp: longer than ${MAX_SDP_BYTES} bytes`);
  if (!sdp.startsWith('v=0')) throw new Error('sdp: does not start with "v=0"');
  for (const [line, what] of [
    [/^m=application \d+ [A-Z/]*DTLS\/SCTP webrtc-datachannel/m, 'an "m=application ... webrtc-datachannel" section'],
    [/^a=ice-ufrag:\S+/m, 'a=ice-ufrag line'],
    [/^a=ice-pwd:\S+/m, 'a=ice-pwd'],
    [/^a=fingerprint:\S+ [0-9A-Fa-f:]+/m, 'a=fingerprint'],
  ] as const) {
    if (!line.test(sdp)) throw new Error(`sdp: lacks ${what}`);
  }
}

async function connection(options: PeerOptions): Promise<RTCPeerConnection> {
  // werift gathers relay candidates only when it has a TURN server; without one it would quietly fall back
  // to host candidates, so relay-only without a relay is refused instead.
  if (options.relayOnly && !(options.iceServers ?? []).some((s) => s.urls.some((u) => /^turns?:/.test(u)))) {
    throw new Error('relayOnly: no TURN server to relay through (the signaling service handed out none, and iceServers names none)');
  }
  const { RTCPeerConnection } = await import('./werift-loader.js');
  return new RTCPeerConnection({
    iceServers: (options.iceServers ?? []).map((s) => ({ urls: s.urls, username: s.username, credential: s.credential })),
    iceTransportPolicy: options.relayOnly ? 'relay' : 'all',
    // Loopback too, so that two programs on one host connect whatever its interfaces.
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv6: false,
  });
}

type Stat = Record<string, unknown> & { type: string; id: string };

/** The selected pair as the W3C stats describe it: transport.selectedCandidatePairId, then its two candidates. */
async function selectedRoute(pc: RTCPeerConnection): Promise<Route | undefined> {
  const stats = (await pc.getStats()) as unknown as Map<string, Stat>;
  const transport = [...stats.values()].find((s) => s.type === 'transport' && s.selectedCandidatePairId);
  const pair = transport && stats.get(transport.selectedCandidatePairId as string);
  if (!pair) return undefined;
  const end = (id: unknown): RouteEnd => {
    const c = stats.get(id as string);
    return { type: String(c?.candidateType), address: String(c?.address), port: Number(c?.port) };
  };
  return {
    local: end(pair.localCandidateId),
    remote: end(pair.remoteCandidateId),
    bytesSent: Number(pair.bytesSent ?? 0),
    bytesReceived: Number(pair.bytesReceived ?? 0),
  };
}

function frameChannel(dc: RTCDataChannel): FrameChannel {
  const closeListeners: (() => void)[] = [];
  let closed = false;
  const fireClose = () => {
    if (closed) return;
    closed = true;
    for (const listener of [...closeListeners]) listener();
  };
  dc.stateChanged.subscribe((state) => {
    if (state === 'closed' || state === 'closing') fireClose();
  });
  return {
    send: (frame) => dc.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength)),
    get bufferedAmount() {
      return dc.bufferedAmount;
    },
    get open() {
      return dc.readyState === 'open' && !closed;
    },
    drained: (threshold) =>
      new Promise<void>((resolve) => {
        if (dc.bufferedAmount <= threshold || closed) return resolve();
        dc.bufferedAmountLowThreshold = threshold;
        // One wait per megabyte a stream sends: its close listener goes when the wait ends, or a long
        // stream would pile them up for the channel's life.
        const done = () => {
          low.unSubscribe();
          const at = closeListeners.indexOf(done);
          if (at >= 0) closeListeners.splice(at, 1);
          resolve();
        };
        const low = dc.bufferedAmountLow.subscribe(done);
        closeListeners.push(done);
      }),
    onFrame: (listener) =>
      void dc.onMessage.subscribe((data) => {
        if (typeof data !== 'string') listener(data);
      }),
    onClose: (listener) => (closed ? queueMicrotask(listener) : void closeListeners.push(listener)),
    close: () => {
      dc.close();
      fireClose();
    },
  };
}

function wrap(pc: RTCPeerConnection, description: SessionDescription): Peer {
  const dc = pc.createDataChannel(DATA_CHANNEL_LABEL, { negotiated: true, id: 0, ordered: true });
  const gathered: (IceCandidate | undefined)[] = [];
  const candidateListeners: ((candidate: IceCandidate | undefined) => void)[] = [];
  const closeListeners: (() => void)[] = [];
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    for (const listener of closeListeners) listener();
  };
  pc.onIceCandidate.subscribe((c) => {
    const candidate = c ? { candidate: c.candidate, sdpMid: c.sdpMid ?? undefined, sdpMLineIndex: c.sdpMLineIndex ?? undefined } : undefined;
    gathered.push(candidate);
    for (const listener of candidateListeners) listener(candidate);
  });
  // Closing the data channel first resets its stream, which the other end sees at once; werift's
  // connection close alone is seen only when ICE consent fails, about 30 s later.
  const shut = () => {
    end();
    if (dc.readyState === 'open' || dc.readyState === 'connecting') dc.close();
    const stop = setTimeout(() => void pc.close().catch(() => undefined), dc.readyState === 'closed' ? 0 : 200);
    stop.unref();
  };
  pc.connectionStateChange.subscribe((state) => {
    if (state === 'failed' || state === 'closed' || state === 'disconnected') shut();
  });
  dc.stateChanged.subscribe((state) => {
    if (state === 'closed') shut();
  });
  const channel = new Promise<FrameChannel>((resolve, reject) => {
    if (dc.readyState === 'open') return resolve(frameChannel(dc));
    dc.stateChanged.subscribe((state) => {
      if (state === 'open') resolve(frameChannel(dc));
    });
    closeListeners.push(() => reject(new Error('the WebRTC connection closed before its data channel opened')));
  });
  channel.catch(() => undefined);
  let remoteCandidates = 0;
  return {
    description,
    onCandidate: (listener) => {
      for (const candidate of gathered) listener(candidate);
      candidateListeners.push(listener);
    },
    addRemoteCandidate: async (candidate) => {
      if (++remoteCandidates > MAX_REMOTE_CANDIDATES) throw new Error(`more than ${MAX_REMOTE_CANDIDATES} remote candidates for one connection`);
      await pc.addIceCandidate({ candidate: candidate.candidate, sdpMid: candidate.sdpMid, sdpMLineIndex: candidate.sdpMLineIndex });
    },
    channel,
    onClose: (listener) => (ended ? queueMicrotask(listener) : void closeListeners.push(listener)),
    route: () => selectedRoute(pc),
    close: shut,
  };
}

/** The caller's side: makes an offer; `accept` takes the answer. */
export async function createCaller(options: PeerOptions = {}): Promise<CallerPeer> {
  const pc = await connection(options);
  // The channel must exist before the offer so that the offer carries the data-channel section.
  const peer = wrap(pc, { type: 'offer', sdp: '' });
  // werift gathers every candidate before setLocalDescription resolves.
  await pc.setLocalDescription(await pc.createOffer());
  if (options.relayOnly && !/^a=candidate:.* typ relay/m.test(pc.localDescription!.sdp)) {
    peer.close();
    const servers = (options.iceServers ?? []).flatMap((s) => s.urls.filter((u) => /^turns?:/.test(u)));
    throw new Error(`relayOnly: the TURN server (${servers.join(', ')}) gave no relay: the allocation failed (its address, or the credentials?)`);
  }
  return {
    ...peer,
    description: { type: 'offer', sdp: pc.localDescription!.sdp },
    accept: async (answer) => {
      checkSdp(answer.sdp);
      await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    },
  };
}

/** The machine's side: takes an offer and makes the answer. A malformed offer rejects (and closes the peer). */
export async function answerOffer(offer: SessionDescription, options: PeerOptions = {}): Promise<Peer> {
  checkSdp(offer.sdp);
  const pc = await connection(options);
  const peer = wrap(pc, { type: 'answer', sdp: '' });
  try {
    await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
  } catch (err) {
    peer.close();
    throw new Error(`cannot answer the offer: ${(err as Error).message}`, { cause: err });
  }
  return { ...peer, description: { type: 'answer', sdp: pc.localDescription!.sdp } };
}
