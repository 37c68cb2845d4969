// gRPC over a WebRTC data channel, the framing (proto/platform/rpc/webrtc/v1/grpc.proto): messages are cut
// into packets small enough for one data-channel message, joined again on the other side up to a limit,
// and a writer waits while the channel's send buffer is full so that a fast stream cannot grow it
// without bound. Every end uses this module: the runtime's data-channel server, the TypeScript client's
// channel and the control page in a browser, which is why it is plain Uint8Array code (no Node Buffer)
// and lives in plugins/formats/, the one folder besides gen/ that the machine, the cloud and the pages
// may all import (README.md).
import { Request, Response, type PacketMessage } from '../../../gen/platform/rpc/webrtc/v1/grpc.js';

/** Packet data size for browsers: their SCTP stacks handle messages up to 16 KiB safely. */
export const BROWSER_PACKET_BYTES = 16_373;
/** The largest packet data the framing allows (the reference's limit); a receiver takes any size up to it. */
export const MAX_PACKET_BYTES = 65_535;
/** How many bytes a frame adds around its packet's data, at most (stream id, field tags and lengths, eom, eos). */
export const FRAME_ENVELOPE_BYTES = 64;
/**
 * Packet data size between Node peers (werift on both ends): werift refuses to send a data-channel message
 * over the peer's max-message-size, which werift announces as 65,536, so a whole frame (its packet and
 * envelope) must fit in that. A frame of a 65,535-byte packet did not: werift threw, and every full packet
 * of a message larger than one packet was lost.
 */
export const NODE_PACKET_BYTES = 65_536 - FRAME_ENVELOPE_BYTES;
/** The largest gRPC message either end reassembles; a larger one fails its call with RESOURCE_EXHAUSTED. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** A writer waits while the channel holds more than this many unsent bytes. */
export const HIGH_WATER_BYTES = 1024 * 1024;

/**
 * The generated message types say `Buffer` for bytes fields (they are generated for Node), but their
 * encoders only read a Uint8Array's bytes; in a browser bundle Buffer is a Uint8Array shim anyway.
 */
const asBytesField = (bytes: Uint8Array) => bytes as PacketMessage['data'];

/** Cuts one serialized message into packets of at most `packetBytes` of data; the last has eom set. */
export function packetize(message: Uint8Array, packetBytes: number = MAX_PACKET_BYTES): PacketMessage[] {
  if (!Number.isInteger(packetBytes) || packetBytes < 1 || packetBytes > MAX_PACKET_BYTES) {
    throw new RangeError(`packetBytes must be an integer from 1 to ${MAX_PACKET_BYTES}, got ${packetBytes}`);
  }
  // An empty message is still a message: one empty packet that ends it.
  if (message.length === 0) return [{ data: asBytesField(new Uint8Array(0)), eom: true }];
  const packets: PacketMessage[] = [];
  for (let offset = 0; offset < message.length; offset += packetBytes) {
    const end = Math.min(offset + packetBytes, message.length);
    packets.push({ data: asBytesField(message.subarray(offset, end)), eom: end === message.length });
  }
  return packets;
}

export class MessageTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`message larger than ${limit} bytes: refused`);
    this.name = 'MessageTooLargeError';
  }
}

/**
 * Joins the packets of one stream's messages. push returns the whole message on its last packet. A message
 * growing past the limit throws MessageTooLargeError as soon as it does (the parts already held are
 * dropped), so a hostile peer cannot make the receiver hold more than the limit per stream.
 */
export class Reassembler {
  private parts: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly limit: number = MAX_MESSAGE_BYTES) {}

  push(packet: PacketMessage): Uint8Array | undefined {
    const data: Uint8Array = packet.data ?? new Uint8Array(0);
    if (this.size + data.length > this.limit) {
      this.parts = [];
      this.size = 0;
      throw new MessageTooLargeError(this.limit);
    }
    this.parts.push(data);
    this.size += data.length;
    if (!packet.eom) return undefined;
    let message: Uint8Array;
    if (this.parts.length === 1) message = this.parts[0];
    else {
      message = new Uint8Array(this.size);
      let at = 0;
      for (const part of this.parts) {
        message.set(part, at);
        at += part.length;
      }
    }
    this.parts = [];
    this.size = 0;
    return message;
  }
}

/** What the framing needs of a data channel: send, the unsent byte count and a signal when it drains. */
export interface FrameSink {
  send(frame: Uint8Array): void;
  readonly bufferedAmount: number;
  /** Resolves when the buffered amount has fallen to `threshold` or below, or the channel has closed. */
  drained(threshold: number): Promise<void>;
  readonly open: boolean;
}

/**
 * Sends frames in order, waiting while more than HIGH_WATER_BYTES are buffered. Frames queue behind a
 * waiting one so that the order on the channel is the order of write calls.
 */
export class FrameWriter {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly sink: FrameSink) {}

  write(frame: Uint8Array): Promise<void> {
    const next = this.tail.then(async () => {
      if (this.sink.bufferedAmount > HIGH_WATER_BYTES) await this.sink.drained(HIGH_WATER_BYTES);
      if (!this.sink.open) throw new Error('data channel closed');
      this.sink.send(frame);
    });
    // A failed write does not wedge the queue for the writes after it; each caller sees its own failure.
    this.tail = next.catch(() => undefined);
    return next;
  }

  writeRequest(request: Request): Promise<void> {
    return this.write(Request.encode(request).finish());
  }

  writeResponse(response: Response): Promise<void> {
    return this.write(Response.encode(response).finish());
  }
}

/** Decodes a frame, or returns undefined for bytes that are not one (a hostile or broken peer). */
export function decodeRequest(frame: Uint8Array): Request | undefined {
  try {
    const request = Request.decode(frame);
    return request.stream ? request : undefined;
  } catch {
    return undefined;
  }
}

export function decodeResponse(frame: Uint8Array): Response | undefined {
  try {
    const response = Response.decode(frame);
    return response.stream ? response : undefined;
  } catch {
    return undefined;
  }
}
