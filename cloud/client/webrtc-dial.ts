// Dials a machine through WebRTC: an offer through a SignalingService (the cloud's, which routes it to
// the machine by `rpc-host`, or the machine's own gRPC port on the LAN), the answer and candidates back,
// then gRPC over the data channel (core/serving/webrtc/channel-client.ts).
import { credentials as grpcCredentials, Metadata, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { SignalingServiceClient, type CallResponse, type OptionalWebRTCConfigResponse } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { fromWireCandidate, fromWireIceServers, toWireCandidate } from '../../core/serving/webrtc/candidates.js';
import { ChannelClient } from '../../core/serving/webrtc/channel-client.js';
import { createCaller, parseDescription, type IceCandidate, type IceServer, type Route } from '../../core/serving/webrtc/peer.js';
import { CloudConnection, type ApiKeyCredentials } from './connection.js';

export interface SignalingDialOptions {
  /** Where SignalingService is served: the cloud's serviceHost ('host:port', 'http://...', 'https://...'), or a machine's host:port. */
  signalingAddress: string;
  /** The machine part to reach (its id): sent as `rpc-host`. */
  host: string;
  /** An API key of the machine's organization, for the cloud's signaling; omitted for a machine's own port. */
  credentials?: ApiKeyCredentials;
  /** PEM roots for an https:// signaling address with a private CA. */
  rootCertificates?: Buffer;
  /** ICE servers of the caller's own, besides those the signaling service hands out. */
  iceServers?: IceServer[];
  /** Connect through TURN relays only. */
  relayOnly?: boolean;
  /** Gives up after this long (default 20 s). */
  timeoutMs?: number;
}

export interface WebRtcConnection {
  channel: ChannelClient;
  /** The candidate pair ICE selected (a "relay" local end when it runs through TURN). */
  route(): Promise<Route | undefined>;
  close(): void;
}

const unary = <T>(start: (cb: (err: ServiceError | null, res: T) => void) => void) =>
  new Promise<T>((resolve, reject) => start((err, res) => (err ? reject(err) : resolve(res))));

function signalingTarget(options: SignalingDialOptions): { address: string; channel: ChannelCredentials; connection?: CloudConnection } {
  if (options.credentials) {
    const connection = new CloudConnection({
      serviceHost: options.signalingAddress,
      credentials: options.credentials,
      rootCertificates: options.rootCertificates,
    });
    return { address: connection.address, channel: connection.channel, connection };
  }
  return { address: options.signalingAddress, channel: grpcCredentials.createInsecure() };
}

export async function dialWebRtc(options: SignalingDialOptions): Promise<WebRtcConnection> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  const target = signalingTarget(options);
  const signaling = new SignalingServiceClient(target.address, target.channel);
  const metadata = async () => {
    const md = target.connection ? await target.connection.metadata() : new Metadata();
    md.set('rpc-host', options.host);
    return md;
  };
  const closeSignaling = () => {
    signaling.close();
    target.connection?.close();
  };
  let caller: Awaited<ReturnType<typeof createCaller>> | undefined;
  try {
    const configMd = await metadata();
    const extra = await unary<OptionalWebRTCConfigResponse>((cb) => signaling.optionalWebRtcConfig({}, configMd, { deadline }, cb));
    const iceServers = [...(options.iceServers ?? []), ...fromWireIceServers(extra.config?.additionalIceServers ?? [])];
    const peer = await createCaller({ iceServers, relayOnly: options.relayOnly });
    caller = peer;
    const md = await metadata();
    const opened = new Promise<void>((resolve, reject) => {
      const call = signaling.call({ sdp: JSON.stringify(peer.description), disableTrickle: false }, md, { deadline });
      let uuid: string | undefined;
      const early: (IceCandidate | undefined)[] = [];
      const update = (candidate: IceCandidate | undefined) => {
        if (!uuid) return void early.push(candidate);
        const request = candidate ? { uuid, candidate: toWireCandidate(candidate) } : { uuid, done: true };
        void metadata()
          .then((m) => unary((cb) => signaling.callUpdate(request, m, { deadline }, cb)))
          .catch(() => undefined);
      };
      peer.onCandidate(update);
      call.on('data', (response: CallResponse) => {
        if (response.init) {
          uuid = response.uuid;
          let answer;
          try {
            answer = parseDescription(response.init.sdp, 'answer');
          } catch (err) {
            return reject(err as Error);
          }
          peer.accept(answer).then(() => {
            for (const candidate of early.splice(0)) update(candidate);
          }, reject);
        } else if (response.update?.candidate) {
          void peer.addRemoteCandidate(fromWireCandidate(response.update.candidate)).catch(() => undefined);
        }
      });
      // The signaling call may end once the machine has sent all its candidates; what matters is the channel.
      call.on('error', (err: ServiceError) => reject(err));
      peer.channel.then(() => {
        call.cancel();
        resolve();
      }, reject);
      const giveUp = setTimeout(() => reject(new Error(`no WebRTC connection to ${options.host} within ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      giveUp.unref();
      void peer.channel.finally(() => clearTimeout(giveUp)).catch(() => undefined);
    });
    await opened;
    const channel = new ChannelClient(await peer.channel);
    closeSignaling();
    return {
      channel,
      route: () => peer.route(),
      close: () => {
        channel.close();
        peer.close();
      },
    };
  } catch (err) {
    caller?.close();
    closeSignaling();
    throw err;
  }
}
