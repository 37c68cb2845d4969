// The runtime's end of gRPC over a WebRTC data channel. Each call on the channel becomes a call on the
// runtime's own gRPC server (through a private socket, runtime-server.ts's bridgeAddress), so that every
// API it serves — unary, streams, module-defined APIs, sessions — runs the same handlers, interceptors,
// errors and deadlines as over gRPC, and nothing is served here that is not served there. Calls go out as
// bidirectional streams: gRPC's wire form does not depend on the method's kind, the server decides it.
import { type Client, type ClientDuplexStream, Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import type { FrameChannel } from '../serving/webrtc/frame-channel.js';
import {
  FrameWriter,
  MAX_MESSAGE_BYTES,
  NODE_PACKET_BYTES,
  MessageTooLargeError,
  Reassembler,
  decodeRequest,
  packetize,
} from '../../plugins/formats/webrtc-framing/framing.js';
import { fromWireMetadata, toWireMetadata } from '../serving/webrtc/metadata.js';
import type { Request, RequestHeaders } from '../../gen/platform/rpc/webrtc/v1/grpc.js';

/** Calls one channel may have open at once; a peer opening more gets RESOURCE_EXHAUSTED for the extra. */
export const MAX_STREAMS_PER_CHANNEL = 256;
/**
 * Bytes of unfinished requests (packets of a message whose last packet has not come) one channel may hold
 * across its calls: two of the largest messages. Each call alone is bounded by MAX_MESSAGE_BYTES, but 256
 * calls each one packet short of it would be 8 GiB; past this, the call that pushed over ends RESOURCE_EXHAUSTED.
 */
export const MAX_PARTIAL_BYTES_PER_CHANNEL = 2 * MAX_MESSAGE_BYTES;

const passthrough = (data: Buffer) => data;

interface OpenStream {
  call: ClientDuplexStream<Buffer, Buffer>;
  reassembler: Reassembler;
  /** Bytes of this call's unfinished message, counted in the channel's `partialBytes`. */
  partial: number;
  /** Set once the peer reset the stream or trailers were sent: nothing more goes out for it. */
  finished: boolean;
}

export interface ChannelServerOptions {
  /** Packet data size for responses (BROWSER_PACKET_BYTES towards a browser). */
  packetBytes?: number;
  maxMessageBytes?: number;
  /** Bytes of unfinished requests the channel holds across its calls (MAX_PARTIAL_BYTES_PER_CHANNEL). */
  maxPartialBytes?: number;
  /** Told about frames that were dropped (not a Request, or for no open stream). */
  onDropped?: (reason: string) => void;
}

/** Serves calls arriving on `channel` by making them on `target`, a client of the runtime's gRPC server. */
export function serveChannel(channel: FrameChannel, target: Client, options: ChannelServerOptions = {}): { close(): void } {
  const streams = new Map<number, OpenStream>();
  const writer = new FrameWriter(channel);
  const packetBytes = options.packetBytes ?? NODE_PACKET_BYTES;
  const dropped = options.onDropped ?? (() => undefined);
  let closed = false;
  let partialBytes = 0;
  const release = (stream: OpenStream) => {
    partialBytes -= stream.partial;
    stream.partial = 0;
  };

  const send = (id: number, response: Parameters<FrameWriter['writeResponse']>[0]) =>
    writer.writeResponse({ ...response, stream: { id } }).catch(() => undefined);

  const finish = (id: number, stream: OpenStream, code: Status, message: string, metadata = new Metadata()) => {
    if (stream.finished) return;
    stream.finished = true;
    streams.delete(id);
    release(stream);
    void send(id, { trailers: { status: { code, message }, metadata: toWireMetadata(metadata) } });
  };

  const open = (id: number, headers: RequestHeaders) => {
    if (streams.has(id)) return dropped(`stream ${id}: headers for a stream already open`);
    const refuse = (code: Status, message: string) => void send(id, { trailers: { status: { code, message }, metadata: { md: {} } } });
    if (streams.size >= MAX_STREAMS_PER_CHANNEL) return refuse(Status.RESOURCE_EXHAUSTED, `more than ${MAX_STREAMS_PER_CHANNEL} calls open on one channel`);
    if (!/^\/[^/\s]+\/[^/\s]+$/.test(headers.method))
      return refuse(Status.UNIMPLEMENTED, `method ${JSON.stringify(headers.method.slice(0, 200))}: not a gRPC method path`);
    let metadata: Metadata;
    try {
      metadata = fromWireMetadata(headers.metadata);
    } catch (err) {
      return refuse(Status.INVALID_ARGUMENT, (err as Error).message);
    }
    const timeoutMs = headers.timeout ? headers.timeout.seconds * 1000 + headers.timeout.nanos / 1e6 : undefined;
    const call = target.makeBidiStreamRequest(headers.method, passthrough, passthrough, metadata, {
      ...(timeoutMs !== undefined && timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {}),
    });
    const stream: OpenStream = {
      call,
      reassembler: new Reassembler(options.maxMessageBytes ?? MAX_MESSAGE_BYTES),
      partial: 0,
      finished: false,
    };
    streams.set(id, stream);
    call.on('metadata', (md: Metadata) => {
      if (!stream.finished) void send(id, { headers: { metadata: toWireMetadata(md) } });
    });
    call.on('data', (message: Buffer) => {
      if (stream.finished) return;
      // Hold the call's reads until the channel has taken the message: the channel's buffer, not this
      // process's memory, is where a slow peer's backlog waits, and it is bounded (framing.ts).
      call.pause();
      const writes = packetize(message, packetBytes).map((packet) => send(id, { message: { packetMessage: packet } }));
      void Promise.all(writes).then(() => call.resume());
    });
    // 'error' repeats a non-OK status, which 'status' already carries.
    call.on('error', () => undefined);
    // grpc-js emits 'status' as soon as the last message is in the call's read buffer, while reads may be
    // held (above) with messages still in it: the trailers go out after the buffer is drained ('end'),
    // or the messages still held would be lost (a large server stream lost its tail).
    let status: StatusObject | undefined;
    let drained = false;
    const trailers = () => {
      if (status && drained) finish(id, stream, status.code, status.details, status.metadata);
    };
    call.on('end', () => {
      drained = true;
      trailers();
    });
    call.on('status', (s: StatusObject) => {
      status = s;
      if (call.readableLength === 0) drained = true;
      trailers();
    });
  };

  const onRequest = (request: Request) => {
    const id = request.stream!.id;
    if (request.headers) return open(id, request.headers);
    const stream = streams.get(id);
    if (!stream) return dropped(`stream ${id}: no open call (a message before headers, or after the end)`);
    if (request.rstStream) {
      stream.finished = true;
      streams.delete(id);
      release(stream);
      stream.call.cancel();
      return;
    }
    const message = request.message;
    if (!message) return dropped(`stream ${id}: a request with neither headers, message nor rst_stream`);
    if (message.hasMessage && message.packetMessage) {
      let whole: Uint8Array | undefined;
      const size = message.packetMessage.data?.length ?? 0;
      if (!message.packetMessage.eom && partialBytes + size > (options.maxPartialBytes ?? MAX_PARTIAL_BYTES_PER_CHANNEL)) {
        stream.call.cancel();
        return finish(
          id,
          stream,
          Status.RESOURCE_EXHAUSTED,
          `more than ${options.maxPartialBytes ?? MAX_PARTIAL_BYTES_PER_CHANNEL} bytes of unfinished requests on one channel`,
        );
      }
      try {
        whole = stream.reassembler.push(message.packetMessage);
      } catch (err) {
        if (!(err instanceof MessageTooLargeError)) throw err;
        stream.call.cancel();
        return finish(id, stream, Status.RESOURCE_EXHAUSTED, `request ${err.message}`);
      }
      if (whole) release(stream);
      else {
        stream.partial += size;
        partialBytes += size;
      }
      if (whole) stream.call.write(Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength));
    }
    if (message.eos) stream.call.end();
  };

  channel.onFrame((frame) => {
    if (closed) return;
    const request = decodeRequest(frame);
    if (!request) return dropped('a frame that is not a Request');
    onRequest(request);
  });
  const close = () => {
    if (closed) return;
    closed = true;
    for (const stream of streams.values()) {
      stream.finished = true;
      stream.call.cancel();
    }
    streams.clear();
    partialBytes = 0;
  };
  channel.onClose(close);
  return {
    close: () => {
      close();
      channel.close();
    },
  };
}
