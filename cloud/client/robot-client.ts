// A client of platform-server (a machine), with sessions on by default: it starts a session, sends its
// id as `platform-sid` on every call and heartbeats at a fifth of the window the server gave. If the
// process dies or loses the network, the heartbeats stop and the server stops the actuators this
// client commanded last (core/session/README.md). The heartbeat timer does not keep the process alive.
import { credentials as grpcCredentials, InterceptingCall, type ChannelCredentials, type ChannelOptions, type Interceptor } from '@grpc/grpc-js';
import { RobotServiceClient, type StartSessionResponse } from '../../gen/platform/robot/v1/robot.js';
import type { Route } from '../../core/serving/webrtc/peer.js';
import { dialWebRtc, type SignalingDialOptions, type WebRtcConnection } from './webrtc-dial.js';

export const SESSION_METADATA = 'platform-sid';

/**
 * The largest message the project's clients accept. An object point cloud of a full 640x480 depth frame
 * is a few MB; gRPC's default 4 MB limit would refuse it with RESOURCE_EXHAUSTED.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export interface RobotClientOptions {
  /** host:port of platform-server, for a direct connection (and the fallback when `webrtc` fails). */
  address?: string;
  /**
   * Reach the machine through WebRTC, signaled through the cloud (or the machine's own port): gRPC then
   * runs over a data channel. When it cannot connect and `address` is given, the client connects directly.
   */
  webrtc?: SignalingDialOptions;
  /** Told why WebRTC failed when the client fell back to the direct connection. */
  onWebRtcFallback?: (error: Error) => void;
  /** Defaults to plaintext. */
  channel?: ChannelCredentials;
  /** Run a session (default true). Without one, nothing is stopped when this client goes away. */
  session?: boolean;
  /** Told about heartbeats that fail (the session is restarted when the server no longer knows it). */
  onSessionError?: (error: Error) => void;
}

type ClientConstructor<C> = new (address: string, channel: ChannelCredentials, options?: ChannelOptions & { interceptors?: Interceptor[] }) => C;

const unary = <Res>(start: (callback: (err: Error | null, res: Res) => void) => void) =>
  new Promise<Res>((resolve, reject) => start((err, res) => (err ? reject(err) : resolve(res))));

export class RobotClient {
  readonly robot: RobotServiceClient;
  private sessionId?: string;
  private heartbeat?: NodeJS.Timeout;
  private readonly clients: { close(): void }[] = [];

  private constructor(
    private readonly options: RobotClientOptions,
    private readonly webrtc?: WebRtcConnection,
  ) {
    this.robot = this.service(RobotServiceClient);
  }

  /** Connects (through WebRTC when `webrtc` is given); with sessions on, resolves once the session has started. */
  static async connect(options: RobotClientOptions): Promise<RobotClient> {
    if (!options.address && !options.webrtc) throw new Error('RobotClient: give an address (direct) or webrtc (signaling address and host)');
    let webrtc: WebRtcConnection | undefined;
    if (options.webrtc) {
      try {
        webrtc = await dialWebRtc(options.webrtc);
      } catch (err) {
        if (!options.address) throw err;
        options.onWebRtcFallback?.(err as Error);
      }
    }
    const client = new RobotClient(options, webrtc);
    if (options.session ?? true) await client.startSession();
    return client;
  }

  /** 'webrtc' when calls run over a WebRTC data channel, 'direct' when over the machine's gRPC port. */
  get transport(): 'webrtc' | 'direct' {
    return this.webrtc ? 'webrtc' : 'direct';
  }

  /** Over WebRTC, the candidate pair the connection runs on (its ends' types: host, srflx, prflx, relay). */
  webrtcRoute(): Promise<Route | undefined> {
    return this.webrtc ? this.webrtc.route() : Promise.resolve(undefined);
  }

  /** The id of the running session, if any. */
  get session(): string | undefined {
    return this.sessionId;
  }

  /** A client of any service of the machine (MotorServiceClient, ...) whose calls carry the session. */
  service<C extends { close(): void }>(Client: ClientConstructor<C>): C {
    const interceptor: Interceptor = (callOptions, nextCall) =>
      new InterceptingCall(nextCall(callOptions), {
        start: (metadata, listener, next) => {
          if (this.sessionId) metadata.set(SESSION_METADATA, this.sessionId);
          next(metadata, listener);
        },
      });
    // Over WebRTC the data channel's interceptor ends every call: the address is never dialed.
    const client = new Client(this.webrtc ? 'webrtc.invalid:1' : this.options.address!, this.options.channel ?? grpcCredentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
      interceptors: this.webrtc ? [interceptor, this.webrtc.channel.interceptor] : [interceptor],
    });
    this.clients.push(client);
    return client;
  }

  private async startSession(): Promise<void> {
    this.sessionId = undefined;
    const response = await unary<StartSessionResponse>((cb) => this.robot.startSession({ resume: '' }, cb));
    this.sessionId = response.id;
    const windowMs = (response.heartbeatWindow?.seconds ?? 2) * 1000 + (response.heartbeatWindow?.nanos ?? 0) / 1e6;
    clearInterval(this.heartbeat);
    // Five heartbeats per window: one lost or late heartbeat does not end the session.
    this.heartbeat = setInterval(() => void this.beat(), Math.max(5, windowMs / 5));
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    const id = this.sessionId;
    if (!id) return;
    try {
      await unary((cb) => this.robot.sendSessionHeartbeat({ id }, cb));
    } catch (err) {
      this.options.onSessionError?.(err as Error);
      // INVALID_ARGUMENT: the server no longer knows the session (it expired); start a fresh one.
      if ((err as { code?: number }).code === 3 && this.sessionId === id) await this.startSession().catch((e: Error) => this.options.onSessionError?.(e));
    }
  }

  /** Stops heartbeating and closes every channel. The session then expires on the server. */
  close(): void {
    clearInterval(this.heartbeat);
    this.sessionId = undefined;
    for (const client of this.clients) client.close();
    this.webrtc?.close();
  }
}
