// gRPC-Web on the web port: each call is forwarded, bytes untouched, to the runtime's own gRPC server
// over loopback, so the page reaches exactly the service implementations that gRPC clients reach. Only
// the framing differs (gRPC-Web puts the trailers in a last frame flagged 0x80, since a browser's fetch
// cannot read HTTP/2 trailers).
import { Client, Metadata, credentials, status, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { boundMessage, echo } from '../bounded-text.js';
import { markForwarded } from './forwarded-for.js';
import { RefusalPacer } from '../refusal-pacer.js';
import { answerRefusal, DEFAULT_WEB_LIMITS, InflightBudget, readRequestFrame, WebCallError, type WebLimits } from './request-body.js';

/** Which methods exist and whether they stream their responses, from the services the runtime serves. */
export type MethodTable = ReadonlyMap<string, { responseStream: boolean; requestStream: boolean }>;

export function methodTable(definitions: readonly Record<string, { path: string; requestStream: boolean; responseStream: boolean }>[]): MethodTable {
  const table = new Map<string, { responseStream: boolean; requestStream: boolean }>();
  for (const definition of definitions) {
    for (const method of Object.values(definition)) table.set(method.path, { responseStream: method.responseStream, requestStream: method.requestStream });
  }
  return table;
}

/** One length-prefixed gRPC-Web frame: flag byte (0 data, 0x80 trailers), 4-byte big-endian length, payload. */
export function frame(flag: number, payload: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** The single data frame of a unary or server-streaming request body. */
export function requestMessage(body: Buffer): Buffer {
  if (body.length < 5) throw new Error('the gRPC-Web body must hold one length-prefixed message frame (at least 5 bytes)');
  if (body[0] !== 0) throw new Error(`the gRPC-Web body's first frame must be a data frame (flag 0), not flag ${body[0]}`);
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) throw new Error(`the gRPC-Web frame announces ${length} bytes but the body holds ${body.length - 5}`);
  return body.subarray(5, 5 + length);
}

function trailers(code: number, message: string, metadata?: Metadata): Buffer {
  let text = `grpc-status: ${code}\r\ngrpc-message: ${encodeURIComponent(boundMessage(message))}\r\n`;
  for (const [key, value] of Object.entries(metadata?.getMap() ?? {})) {
    if (typeof value === 'string') text += `${key}: ${value}\r\n`;
  }
  return frame(0x80, Buffer.from(text));
}

/**
 * Request headers that carry gRPC metadata through to the program's gRPC server: the control page's
 * session id, the cloud page's bearer token, and rpc-host, which names the machine a browser signals to
 * through the cloud's SignalingService (Call, CallUpdate, OptionalWebRTCConfig).
 */
const FORWARDED_HEADERS = ['platform-sid', 'authorization', 'rpc-host'];

const identity = (b: Buffer) => b;

/**
 * The forwarder's channel pings its connection every 20 s while calls are open and drops it when a ping
 * goes unanswered for 10 s: a connection whose reading stopped (Node's HTTP/2 client stops reading a
 * connection that receives a header block over 64 KiB, silently) then fails its calls with UNAVAILABLE
 * and the next call opens a new one, instead of every later call of every visitor hanging on it. The
 * server answers pings in this same process, so the timeout is long enough that a busy event loop is
 * not taken for a dead connection. It has its own connection (a local subchannel pool), not one shared
 * with other clients in the process.
 */
export const FORWARDER_CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.keepalive_time_ms': 20_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.use_local_subchannel_pool': 1,
};

/** Answers a call refused before it is forwarded, paced per address; a body not read to its end is not read further. */
function refuse(req: IncomingMessage, res: ServerResponse, code: number, message: string, pacer: RefusalPacer): void {
  answerRefusal(
    req,
    res,
    () => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/grpc-web+proto', 'cache-control': 'no-store' });
      res.end(trailers(code, message));
    },
    pacer,
  );
}

export class GrpcWebForwarder {
  private client?: { address: string; client: Client };
  private readonly budget: InflightBudget;
  constructor(
    private readonly target: () => { address: string; credentials?: ChannelCredentials },
    private readonly methods: MethodTable,
    private readonly limits: WebLimits = DEFAULT_WEB_LIMITS,
    private readonly channelOptions: Record<string, number> = FORWARDER_CHANNEL_OPTIONS,
    /**
     * Paces the answers to refused requests per address (refusal-pacer.ts): the forwarder's refusals and
     * the web port's own (startWebServer uses it too), so a loop of refused requests cannot keep a core busy.
     */
    readonly refusals: RefusalPacer = new RefusalPacer(),
  ) {
    this.budget = new InflightBudget(limits.maxInflightBytes);
  }

  /** Bytes of request bodies held now, over all calls being read. */
  get inflightBytes(): number {
    return this.budget.held;
  }

  /** True when the request is a gRPC-Web call (the caller then lets this forwarder answer it). */
  static matches(req: IncomingMessage): boolean {
    return req.method === 'POST' && (req.headers['content-type'] ?? '').startsWith('application/grpc-web');
  }

  private channel(): Client {
    const { address, credentials: creds } = this.target();
    // The runtime's gRPC server can move (a bind_address change); follow it.
    if (this.client?.address !== address) {
      this.client?.client.close();
      this.client = { address, client: new Client(address, creds ?? credentials.createInsecure(), this.channelOptions) };
    }
    return this.client.client;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '';
    // Everything that can be checked without the body is checked before any of it is read.
    const method = this.methods.get(path);
    if (!method) return refuse(req, res, status.UNIMPLEMENTED, `${echo(path)}: no such method on this server`, this.refusals);
    if (method.requestStream) return refuse(req, res, status.UNIMPLEMENTED, `${path}: client-streaming calls cannot be made over gRPC-Web`, this.refusals);
    const metadata = new Metadata();
    for (const name of FORWARDED_HEADERS) {
      const value = req.headers[name];
      if (typeof value !== 'string') continue;
      if (Buffer.byteLength(value) > this.limits.maxHeaderValueBytes) {
        return refuse(
          req,
          res,
          status.INVALID_ARGUMENT,
          `header ${name}: ${Buffer.byteLength(value)} bytes; at most ${this.limits.maxHeaderValueBytes} are forwarded (PLATFORM_WEB_MAX_HEADER_BYTES)`,
          this.refusals,
        );
      }
      metadata.set(name, value);
    }
    let message: Buffer;
    try {
      message = await readRequestFrame(req, this.limits, this.budget);
    } catch (err) {
      if (err instanceof WebCallError) return refuse(req, res, err.code, err.message, this.refusals);
      // The client went away while sending: nobody is left to answer.
      req.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/grpc-web+proto', 'cache-control': 'no-store' });
    // The browser's own address, so that per-address limits behind this hop count each browser apart.
    markForwarded(metadata, req.socket.remoteAddress);
    const client = this.channel();
    const fail = (err: ServiceError) => res.end(trailers(err.code ?? status.UNKNOWN, err.details ?? err.message, err.metadata));
    if (!method.responseStream) {
      client.makeUnaryRequest<Buffer, Buffer>(path, identity, identity, message, metadata, (err, reply) => {
        if (err) {
          fail(err);
          return;
        }
        res.write(frame(0, reply!));
        res.end(trailers(status.OK, ''));
      });
      return;
    }
    const stream = client.makeServerStreamRequest<Buffer, Buffer>(path, identity, identity, message, metadata);
    // The headers go out now: a stream may stay quiet for a long time before its first message.
    res.flushHeaders();
    // A closed tab ends the call on the runtime too.
    res.on('close', () => stream.cancel());
    stream.on('data', (reply: Buffer) => res.write(frame(0, reply)));
    stream.on('error', fail);
    stream.on('status', (s: { code: number; details: string; metadata: Metadata }) => {
      if (s.code === status.OK) res.end(trailers(status.OK, '', s.metadata));
    });
  }

  close(): void {
    this.client?.client.close();
  }
}
