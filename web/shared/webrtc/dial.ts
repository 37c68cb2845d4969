// Dials a machine from the browser through the cloud's SignalingService, over gRPC-Web to the page's own
// origin: the browser's own RTCPeerConnection makes the offer, `Call` (a server stream, routed to the
// machine by the metadata rpc-host) brings back the machine's answer and candidates, `CallUpdate`
// trickles the browser's. The caller authenticates with the signed-in key's token, which the cloud
// checks against the machine's organization. The data channel is the one the runtime expects:
// pre-negotiated (id 0), ordered and reliable (core/serving/webrtc/peer.ts).
import * as signaling from '../../../gen/platform/rpc/webrtc/v1/signaling.js';
import { grpcWeb, RpcError } from '../grpc-web-client.js';
import { ChannelTransport } from './channel-transport.js';

const SIGNALING = '/platform.rpc.webrtc.v1.SignalingService';

export interface DialOptions {
  /** The machine part to reach (its id), sent as rpc-host. */
  host: string;
  /** The signed-in key's access token. */
  token: string;
  /** Gives up after this long (default 20 s). */
  timeoutMs?: number;
}

export interface MachineConnection {
  transport: ChannelTransport;
  close(): void;
}

const wireCandidate = (c: RTCIceCandidate): signaling.ICECandidate => ({
  candidate: c.candidate,
  sdpMid: c.sdpMid ?? undefined,
  sdpmLineIndex: c.sdpMLineIndex ?? undefined,
  usernameFragment: c.usernameFragment ?? undefined,
});

export async function dialThroughCloud(options: DialOptions): Promise<MachineConnection> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const headers = { authorization: `Bearer ${options.token}`, 'rpc-host': options.host };
  const config = await grpcWeb.unary(
    `${SIGNALING}/OptionalWebRTCConfig`,
    signaling.OptionalWebRTCConfigRequest,
    signaling.OptionalWebRTCConfigResponse,
    {},
    headers,
    AbortSignal.timeout(timeoutMs),
  );
  const iceServers = (config.config?.additionalIceServers ?? []).map((s) => ({
    urls: s.urls,
    username: s.username || undefined,
    credential: s.credential || undefined,
  }));
  const pc = new RTCPeerConnection({ iceServers });
  const dc = pc.createDataChannel('data', { negotiated: true, id: 0, ordered: true });
  const call = new AbortController();
  let uuid = '';
  let gathered = false;
  let callEnded = false;
  let opened = false;
  let doneSent = false;
  const early: RTCIceCandidate[] = [];
  const update = (request: Partial<signaling.CallUpdateRequest>) =>
    grpcWeb
      .unary(
        `${SIGNALING}/CallUpdate`,
        signaling.CallUpdateRequest,
        signaling.CallUpdateResponse,
        { uuid, ...request },
        headers,
        AbortSignal.timeout(timeoutMs),
      )
      .catch(() => undefined);
  // The browser's end of candidates goes out once the machine has sent all of its (the cloud ends the call
  // on it, relaying nothing more) or the channel is open, never before: a machine still gathering would
  // have its later candidates dropped.
  const maybeDone = () => {
    if (!uuid || doneSent || !gathered || !(callEnded || opened)) return;
    doneSent = true;
    void update({ done: true });
  };
  pc.addEventListener('icecandidate', (event) => {
    if (!event.candidate) {
      gathered = true;
      return maybeDone();
    }
    // An empty candidate line ends one generation of candidates; it is not one.
    if (!event.candidate.candidate) return;
    if (uuid) void update({ candidate: wireCandidate(event.candidate) });
    else early.push(event.candidate);
  });
  try {
    await pc.setLocalDescription(await pc.createOffer());
    let remoteSet: Promise<void> | undefined;
    const channelOpen = new Promise<void>((resolve, reject) => {
      dc.addEventListener('open', () => resolve());
      pc.addEventListener('connectionstatechange', () => {
        if (pc.connectionState === 'failed' || pc.connectionState === 'closed')
          reject(new Error(`the WebRTC connection to ${options.host} ${pc.connectionState}`));
      });
    });
    const signalled = grpcWeb
      .serverStream(
        `${SIGNALING}/Call`,
        signaling.CallRequest,
        signaling.CallResponse,
        { sdp: JSON.stringify({ type: 'offer', sdp: pc.localDescription!.sdp }), disableTrickle: false },
        (response) => {
          if (response.init && !remoteSet) {
            uuid = response.uuid;
            const answer = JSON.parse(response.init.sdp) as RTCSessionDescriptionInit;
            remoteSet = pc.setRemoteDescription(answer).then(() => {
              for (const candidate of early.splice(0)) void update({ candidate: wireCandidate(candidate) });
              maybeDone();
            });
          } else if (response.update?.candidate && remoteSet) {
            const c = response.update.candidate;
            void remoteSet.then(() => pc.addIceCandidate({ candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpmLineIndex })).catch(() => undefined);
          }
        },
        call.signal,
        headers,
      )
      .then(() => {
        callEnded = true;
        maybeDone();
      });
    // Once the channel is open the call has done its work; a refusal before that is the dial's failure.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RpcError(4, `${SIGNALING}/Call`, `no WebRTC connection to ${options.host} within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    channelOpen.catch(() => undefined);
    try {
      await Promise.race([channelOpen, signalled.then(() => channelOpen), timeout]);
    } finally {
      clearTimeout(timer);
    }
    opened = true;
    maybeDone();
    call.abort();
    signalled.catch(() => undefined);
  } catch (err) {
    call.abort();
    pc.close();
    throw err;
  }
  const transport = new ChannelTransport(dc);
  transport.onClose(() => pc.close());
  pc.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'failed' || pc.connectionState === 'closed') transport.close();
  });
  return {
    transport,
    close: () => {
      transport.close();
      pc.close();
    },
  };
}
