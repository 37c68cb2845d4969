// An online machine answers WebRTC offers through the cloud's signaling: it holds SignalingService/Answer
// open through its CloudLink (as its part, `rpc-host` its part id, heartbeats asked for), answers each
// offer with the runtime's WebRtcAnswerer, and relays candidates both ways. When the stream ends (the cloud
// restarted, the network dropped) it dials again after a short wait, at once when any other call of the
// machine reaches the cloud (core/cloud-link/reachable.ts): the cloud returning is found within seconds.
import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { SignalingServiceClient, type AnswerRequest, type AnswerResponse } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { CredentialsRefusedError, type CloudLink } from '../cloud-link/cloud-link.js';
import { onCloudReachable } from '../cloud-link/reachable.js';
import { fromWireCandidate, fromWireIceServers, toWireCandidate } from '../serving/webrtc/candidates.js';
import { TooManyPeersError, type Answered, type WebRtcAnswerer } from './answerer.js';

/** Waits between attempts: doubling from the first, capped so that a returning cloud is found quickly. */
export const REDIAL_MIN_MS = 250;
export const REDIAL_MAX_MS = 2000;
/** After the cloud refused the machine's credentials: they will not change until the config file does. */
export const REFUSED_WAIT_MS = 30_000;

export interface CloudAnswererLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export class CloudAnswerer {
  private stream?: ClientDuplexStream<AnswerResponse, AnswerRequest>;
  /** Offers being answered or answered, by uuid: a candidate may arrive while its answer is being made. */
  private readonly calls = new Map<string, Promise<Answered | undefined>>();
  private stopped = false;
  private failures = 0;
  private refusedCredentials = false;
  private wake?: () => void;
  private readonly unsubscribe: () => void;
  /** True while the Answer stream is open and the cloud has not refused it. */
  connected = false;

  constructor(
    private readonly link: CloudLink,
    /** The answerer of the server now serving (it changes when the runtime rebinds); undefined: refuse. */
    private readonly answerer: () => WebRtcAnswerer | undefined,
    private readonly log: CloudAnswererLog,
  ) {
    this.unsubscribe = onCloudReachable(() => this.wake?.());
  }

  start(): void {
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.answerOnce();
        this.failures = 0;
        this.refusedCredentials = false;
      } catch (err) {
        if (this.stopped) return;
        this.link.refused(err);
        this.refusedCredentials = err instanceof CredentialsRefusedError;
        if (this.failures === 0) this.log.warn('not answering WebRTC offers through the cloud; retrying', { error: (err as Error).message });
        this.failures++;
      }
      if (this.stopped) return;
      const wait = this.refusedCredentials ? REFUSED_WAIT_MS : Math.min(REDIAL_MIN_MS * 2 ** Math.min(this.failures, 10), REDIAL_MAX_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** One Answer stream, until it ends: resolves when the cloud ended it, rejects with its error. */
  private async answerOnce(): Promise<void> {
    const md = await this.link.metadata();
    md.set('rpc-host', this.link.partId);
    md.set('heartbeats-allowed', 'true');
    const stream = this.link.client(SignalingServiceClient).answer(md);
    this.stream = stream;
    await new Promise<void>((resolve, reject) => {
      stream.on('metadata', (_: Metadata) => {
        if (!this.connected) this.log.info('answering WebRTC offers through the cloud');
        this.connected = true;
        this.failures = 0;
      });
      stream.on('data', (request: AnswerRequest) => void this.onRequest(stream, request));
      stream.on('error', (err) => {
        this.connected = false;
        reject(err);
      });
      stream.on('end', () => {
        this.connected = false;
        resolve();
      });
    });
  }

  private async onRequest(stream: ClientDuplexStream<AnswerResponse, AnswerRequest>, request: AnswerRequest): Promise<void> {
    const { uuid } = request;
    const send = (response: AnswerResponse) => {
      if (!stream.writableEnded && !stream.destroyed) stream.write(response);
    };
    if (request.init) {
      const init = request.init;
      const answering = (async () => {
        const answerer = this.answerer();
        if (!answerer) return void send({ uuid, error: { status: { code: 14, message: 'the runtime is not serving' } } });
        try {
          return await answerer.answer(init.sdp, fromWireIceServers(init.optionalConfig?.additionalIceServers ?? []));
        } catch (err) {
          // RESOURCE_EXHAUSTED when every place is held by a connected peer; otherwise the offer was bad.
          return void send({ uuid, error: { status: { code: err instanceof TooManyPeersError ? 8 : 3, message: (err as Error).message } } });
        }
      })();
      this.calls.set(uuid, answering);
      const answered = await answering;
      if (!answered) return void this.calls.delete(uuid);
      // The entry lives as long as the peer (the answerer's connect timeout ends one that never connects),
      // so this map is bounded by the answerer's peers.
      answered.onClose(() => {
        this.calls.delete(uuid);
        // A peer closed before its gathering ended (timed out, evicted) sends no more candidates.
        send({ uuid, done: {} });
      });
      send({ uuid, init: { sdp: answered.answer } });
      answered.onCandidate((candidate) => send(candidate ? { uuid, update: { candidate: toWireCandidate(candidate) } } : { uuid, done: {} }));
    } else if (request.update?.candidate) {
      const answered = await this.calls.get(uuid);
      try {
        await answered?.addRemoteCandidate(fromWireCandidate(request.update.candidate));
      } catch {
        // A candidate that does not parse is the caller's loss: the others may still connect.
      }
    } else if (request.error) {
      const answered = this.calls.get(uuid);
      this.calls.delete(uuid);
      (await answered)?.close();
    } else if (request.done) {
      this.calls.delete(uuid);
    }
    // heartbeat: nothing to do; its arrival kept the stream alive.
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.wake?.();
    this.stream?.cancel();
    this.calls.clear();
  }
}

/**
 * What both programs do once online (core/server/main.ts, core/micro/main.ts): with -webrtc (the default)
 * an online machine also answers offers signaled through its cloud, over its one CloudLink. Returns the
 * answerer to stop on shutdown, or undefined when there is no link or -webrtc=false.
 */
export function answerThroughCloud(
  link: CloudLink | undefined,
  webrtc: boolean,
  answerer: () => WebRtcAnswerer | undefined,
  log: CloudAnswererLog,
): CloudAnswerer | undefined {
  if (!link || !webrtc) return undefined;
  const cloudAnswerer = new CloudAnswerer(link, answerer, log);
  cloudAnswerer.start();
  return cloudAnswerer;
}
