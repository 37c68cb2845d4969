// The caller's end of gRPC over a WebRTC data channel, as a grpc-js interceptor: a client built with it
// (any generated *ServiceClient) sends its calls over the channel instead of HTTP/2, with the same
// metadata, deadlines, streaming and flow control. The interceptor ends the chain: put it last.
import {
  InterceptingCall,
  Metadata,
  status as Status,
  type Interceptor,
  type InterceptingListener,
  type InterceptorOptions,
  type StatusObject,
} from '@grpc/grpc-js';
import type { MessageContext } from '@grpc/grpc-js/build/src/call-interface.js';
import type { InterceptingCallInterface } from '@grpc/grpc-js/build/src/client-interceptors.js';
import type { Response } from '../../../gen/platform/rpc/webrtc/v1/grpc.js';
import type { FrameChannel } from './frame-channel.js';
import {
  FrameWriter,
  MAX_MESSAGE_BYTES,
  NODE_PACKET_BYTES,
  MessageTooLargeError,
  Reassembler,
  decodeResponse,
  packetize,
} from '../../../plugins/formats/webrtc-framing/framing.js';
import { fromWireMetadata, toWireMetadata } from './metadata.js';

interface CallState {
  onResponse(response: Response): void;
  onChannelClosed(): void;
}

/** One data channel shared by many calls; `interceptor` makes clients use it. */
export class ChannelClient {
  private readonly writer: FrameWriter;
  private readonly calls = new Map<number, CallState>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly channel: FrameChannel,
    private readonly options: { packetBytes?: number; maxMessageBytes?: number } = {},
  ) {
    this.writer = new FrameWriter(channel);
    channel.onFrame((frame) => {
      const response = decodeResponse(frame);
      if (response) this.calls.get(response.stream!.id)?.onResponse(response);
    });
    channel.onClose(() => {
      this.closed = true;
      for (const call of [...this.calls.values()]) call.onChannelClosed();
      this.calls.clear();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.channel.close();
  }

  readonly interceptor: Interceptor = (options) => new InterceptingCall(this.startCall(options));

  private startCall(options: InterceptorOptions): InterceptingCallInterface {
    const id = this.nextId++;
    const method = options.method_definition;
    const packetBytes = this.options.packetBytes ?? NODE_PACKET_BYTES;
    const reassembler = new Reassembler(this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES);
    let listener: Partial<InterceptingListener> = {};
    const inbox: Uint8Array[] = [];
    let reads = 0;
    let pendingStatus: StatusObject | undefined;
    let done = false;
    let receivedMessage = false;
    let timer: NodeJS.Timeout | undefined;

    // The status goes out only after every message received before it has been read.
    const flush = () => {
      while (reads > 0 && inbox.length > 0) {
        reads--;
        const bytes = inbox.shift()!;
        let message: unknown;
        try {
          message = method.responseDeserialize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        } catch (err) {
          return end({ code: Status.INTERNAL, details: `cannot decode the response: ${(err as Error).message}`, metadata: new Metadata() }, true);
        }
        receivedMessage = true;
        listener.onReceiveMessage?.(message);
      }
      if (pendingStatus && inbox.length === 0) {
        const status = pendingStatus;
        pendingStatus = undefined;
        // As grpc-js's own bottom call does for a unary response: a message (null if none) before the status.
        if (!method.responseStream && !receivedMessage) listener.onReceiveMessage?.(null);
        listener.onReceiveStatus?.(status);
      }
    };
    const end = (status: StatusObject, reset: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.calls.delete(id);
      if (reset && !this.closed) void this.writer.writeRequest({ stream: { id }, rstStream: true }).catch(() => undefined);
      if (reset) inbox.length = 0;
      pendingStatus = status;
      flush();
    };
    const state: CallState = {
      onResponse: (response) => {
        if (done) return;
        if (response.headers) listener.onReceiveMetadata?.(fromWireMetadata(response.headers.metadata));
        else if (response.message?.packetMessage) {
          try {
            const whole = reassembler.push(response.message.packetMessage);
            if (whole) inbox.push(whole);
          } catch (err) {
            if (!(err instanceof MessageTooLargeError)) throw err;
            return end({ code: Status.RESOURCE_EXHAUSTED, details: `response ${err.message}`, metadata: new Metadata() }, true);
          }
          flush();
        } else if (response.trailers) {
          const status = response.trailers.status;
          end({ code: status?.code ?? Status.UNKNOWN, details: status?.message ?? '', metadata: fromWireMetadata(response.trailers.metadata) }, false);
        }
      },
      onChannelClosed: () => end({ code: Status.UNAVAILABLE, details: 'the WebRTC data channel closed', metadata: new Metadata() }, false),
    };

    const deadline = options.deadline === undefined ? undefined : new Date(options.deadline).getTime();
    const write = (request: Parameters<FrameWriter['writeRequest']>[0]) => this.writer.writeRequest({ ...request, stream: { id } });
    const sendMessage = (context: MessageContext, message: unknown) => {
      if (done) return context.callback?.();
      const packets = packetize(method.requestSerialize(message), packetBytes);
      const writes = packets.map((packet) => write({ message: { hasMessage: true, packetMessage: packet, eos: false } }));
      Promise.all(writes).then(
        () => context.callback?.(),
        (err: Error) => end({ code: Status.UNAVAILABLE, details: err.message, metadata: new Metadata() }, false),
      );
    };
    return {
      start: (metadata, next) => {
        listener = next ?? {};
        if (this.closed) return end({ code: Status.UNAVAILABLE, details: 'the WebRTC data channel is closed', metadata: new Metadata() }, false);
        this.calls.set(id, state);
        let timeout: { seconds: number; nanos: number } | undefined;
        if (deadline !== undefined && Number.isFinite(deadline)) {
          const ms = Math.max(0, deadline - Date.now());
          timeout = { seconds: Math.floor(ms / 1000), nanos: Math.round((ms % 1000) * 1e6) };
          // The machine ends the call at its deadline; this ends it here too if the channel says nothing.
          timer = setTimeout(() => end({ code: Status.DEADLINE_EXCEEDED, details: 'deadline exceeded', metadata: new Metadata() }, true), ms);
          timer.unref();
        }
        // grpc-js reads a unary response itself (its bottom call starts the one read); so does this one.
        if (!method.responseStream) reads++;
        write({ headers: { method: method.path, metadata: toWireMetadata(metadata), timeout } }).catch((err: Error) =>
          end({ code: Status.UNAVAILABLE, details: err.message, metadata: new Metadata() }, false),
        );
      },
      sendMessageWithContext: sendMessage,
      sendMessage: (message) => sendMessage({}, message),
      startRead: () => {
        reads++;
        flush();
      },
      halfClose: () => {
        if (!done) write({ message: { hasMessage: false, eos: true } }).catch(() => undefined);
      },
      cancelWithStatus: (code, details) => end({ code, details, metadata: new Metadata() }, true),
      getPeer: () => 'webrtc',
      getAuthContext: () => null,
    };
  }
}
