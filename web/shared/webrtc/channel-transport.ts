// The page's end of gRPC over a WebRTC data channel: the same unary and server-stream calls as gRPC-Web
// (grpc-web-client.ts's Transport), framed as the runtime's data-channel server expects
// (plugins/formats/webrtc-framing/framing.ts): headers with the method and metadata, the request in
// packets of at most 16,373 bytes (what browsers send safely), end of stream, and the response's
// headers, packets and trailers back. Aborting a call's signal resets its stream (rst_stream), which
// cancels the handler on the machine, as dropping a gRPC-Web request does; the call rejects with the
// signal's reason, so a deadline (a TimeoutError) becomes DEADLINE_EXCEEDED exactly as over gRPC-Web.
import type { Response } from '../../../gen/platform/rpc/webrtc/v1/grpc.js';
import {
  BROWSER_PACKET_BYTES,
  FrameWriter,
  MAX_MESSAGE_BYTES,
  MessageTooLargeError,
  Reassembler,
  decodeResponse,
  packetize,
  type FrameSink,
} from '../../../plugins/formats/webrtc-framing/framing.js';
import { RpcError, type Codec, type Transport } from '../grpc-web-client.js';

/** What one call does with what arrives for its stream. */
interface CallSink {
  message(bytes: Uint8Array): void;
  /** The trailers' status; the call is over. */
  end(code: number, detail: string): void;
  /** The call cannot go on (the channel closed, a broken response): reject with this. */
  fail(error: Error): void;
}

const UNAVAILABLE = 14;

/** The framing's view of a browser's RTCDataChannel. */
function sinkOf(dc: RTCDataChannel): FrameSink {
  return {
    send: (frame) => dc.send(frame as Uint8Array<ArrayBuffer>),
    get bufferedAmount() {
      return dc.bufferedAmount;
    },
    get open() {
      return dc.readyState === 'open';
    },
    drained: (threshold) =>
      new Promise<void>((resolve) => {
        if (dc.bufferedAmount <= threshold || dc.readyState !== 'open') return resolve();
        dc.bufferedAmountLowThreshold = threshold;
        const done = () => {
          dc.removeEventListener('bufferedamountlow', done);
          dc.removeEventListener('close', done);
          resolve();
        };
        dc.addEventListener('bufferedamountlow', done);
        dc.addEventListener('close', done);
      }),
  };
}

/** gRPC calls over one open data channel; many calls share it, each on its own stream id. */
export class ChannelTransport implements Transport {
  private readonly writer: FrameWriter;
  private readonly calls = new Map<number, (response: Response) => void>();
  private readonly failures = new Map<number, (error: Error) => void>();
  private readonly closeListeners: (() => void)[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly dc: RTCDataChannel) {
    dc.binaryType = 'arraybuffer';
    this.writer = new FrameWriter(sinkOf(dc));
    dc.addEventListener('message', (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') return;
      const response = decodeResponse(new Uint8Array(event.data));
      // A frame that is not a Response, or for a stream no longer open, is dropped.
      if (response) this.calls.get(response.stream!.id)?.(response);
    });
    dc.addEventListener('close', () => this.shut());
    if (dc.readyState === 'closed' || dc.readyState === 'closing') this.shut();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Called once when the channel closes (the machine went away, the connection failed, or close()). */
  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.dc.close();
    this.shut();
  }

  private shut(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fail of [...this.failures.values()]) fail(new Error('the WebRTC data channel to the machine closed'));
    this.calls.clear();
    this.failures.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  unary<Req, Res>(path: string, req: Codec<Req>, res: Codec<Res>, message: object, headers: Record<string, string>, signal?: AbortSignal): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let reply: Res | undefined;
      this.start(path, req, message, headers, signal, reject, {
        message: (bytes) => (reply = res.decode(bytes)),
        end: (code, detail) =>
          code === 0 && reply !== undefined ? resolve(reply) : reject(new RpcError(code, path, code === 0 ? 'the reply had no message' : detail)),
        fail: reject,
      });
    });
  }

  serverStream<Req, Res>(
    path: string,
    req: Codec<Req>,
    res: Codec<Res>,
    message: object,
    onMessage: (reply: Res) => void,
    signal: AbortSignal | undefined,
    headers: Record<string, string>,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.start(path, req, message, headers, signal, reject, {
        message: (bytes) => onMessage(res.decode(bytes)),
        end: (code, detail) => (code === 0 ? resolve() : reject(new RpcError(code, path, detail))),
        fail: reject,
      });
    });
  }

  /** Opens a stream, sends the request and routes the stream's responses to `sink` until it ends. */
  private start<Req>(
    path: string,
    req: Codec<Req>,
    message: object,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    reject: (reason: unknown) => void,
    sink: CallSink,
  ): void {
    if (signal?.aborted) return reject(signal.reason);
    if (this.closed) return reject(new RpcError(UNAVAILABLE, path, 'the WebRTC data channel to the machine is closed'));
    const id = this.nextId++;
    const reassembler = new Reassembler(MAX_MESSAGE_BYTES);
    let over = false;
    const finish = (reset: boolean) => {
      over = true;
      this.calls.delete(id);
      this.failures.delete(id);
      signal?.removeEventListener('abort', abort);
      if (reset && !this.closed) void this.writer.writeRequest({ stream: { id }, rstStream: true }).catch(() => undefined);
    };
    const fail = (error: Error, reset: boolean) => {
      if (over) return;
      finish(reset);
      sink.fail(error instanceof RpcError ? error : new RpcError(UNAVAILABLE, path, error.message));
    };
    const abort = () => {
      if (over) return;
      finish(true);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort);
    this.failures.set(id, (error) => fail(error, false));
    this.calls.set(id, (response) => {
      if (over) return;
      if (response.message?.packetMessage) {
        let whole: Uint8Array | undefined;
        try {
          whole = reassembler.push(response.message.packetMessage);
        } catch (err) {
          if (!(err instanceof MessageTooLargeError)) throw err;
          return fail(new RpcError(8, path, `the response: ${err.message}`), true);
        }
        if (!whole) return;
        try {
          sink.message(whole);
        } catch (err) {
          fail(new RpcError(13, path, `cannot decode the response: ${(err as Error).message}`), true);
        }
      } else if (response.trailers) {
        finish(false);
        const status = response.trailers.status;
        sink.end(status?.code ?? 2, status?.message || 'the reply had no status');
      }
    });
    const md = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), { values: [value] }]));
    const write = (request: Parameters<FrameWriter['writeRequest']>[0]) =>
      this.writer.writeRequest({ ...request, stream: { id } }).catch((err: Error) => fail(err, false));
    void write({ headers: { method: path, metadata: { md } } });
    const body = req.encode(req.fromPartial(message)).finish();
    for (const packet of packetize(body, BROWSER_PACKET_BYTES)) void write({ message: { hasMessage: true, packetMessage: packet, eos: false } });
    void write({ message: { hasMessage: false, eos: true } });
  }
}
