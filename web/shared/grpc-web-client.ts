// A small gRPC-Web client over fetch: the page's calls go to the same RPCs gRPC clients use, with the
// generated message codecs. Every call carries the page's session id (metadata platform-sid). `unary` and
// `serverStream` go through the page's transport: gRPC-Web to the page's own origin by default, or a
// WebRTC data channel (webrtc/channel-transport.ts) when the control page reached its machine through
// the cloud; `grpcWeb` is always gRPC-Web (the cloud's signaling itself).
export interface Codec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
  fromPartial(object: object): T;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    readonly path: string,
    detail: string,
  ) {
    super(`${path.slice(path.lastIndexOf('/') + 1)}: ${detail} (gRPC status ${code})`);
  }
}

let sessionId = '';
/** Calls made from now on belong to this session (empty: none). */
export function useSession(id: string): void {
  sessionId = id;
}

/** How a call travels. Both kinds honour `signal` as gRPC-Web does: aborting rejects with its reason. */
export interface Transport {
  unary<Req, Res>(path: string, req: Codec<Req>, res: Codec<Res>, message: object, headers: Record<string, string>, signal?: AbortSignal): Promise<Res>;
  serverStream<Req, Res>(
    path: string,
    req: Codec<Req>,
    res: Codec<Res>,
    message: object,
    onMessage: (reply: Res) => void,
    signal: AbortSignal | undefined,
    headers: Record<string, string>,
  ): Promise<void>;
}

/** gRPC-Web over fetch to the page's own origin, whatever the page's transport. */
export const grpcWeb: Transport = { unary: unaryCall, serverStream: grpcWebServerStream };
let transport: Transport = grpcWeb;

/** The page's calls from now on travel by `next` (the control page's data channel, say). */
export function useTransport(next: Transport): void {
  transport = next;
}

const withSession = (headers: Record<string, string>) => (sessionId ? { ...headers, 'platform-sid': sessionId } : headers);

function frames(bytes: Uint8Array): { flag: number; payload: Uint8Array }[] {
  const out = [];
  let at = 0;
  while (at + 5 <= bytes.length) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 4).getUint32(0);
    out.push({ flag: bytes[at], payload: bytes.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/** Reads length-prefixed gRPC-Web frames from a byte stream that arrives in arbitrary pieces. */
export class FrameReader {
  private buffered = new Uint8Array(0);

  /** Adds bytes; returns the frames completed by them (a frame can straddle network chunks). */
  push(bytes: Uint8Array): { flag: number; payload: Uint8Array }[] {
    const joined = new Uint8Array(this.buffered.length + bytes.length);
    joined.set(this.buffered);
    joined.set(bytes, this.buffered.length);
    const out = [];
    let at = 0;
    while (at + 5 <= joined.length) {
      const length = new DataView(joined.buffer, at + 1, 4).getUint32(0);
      if (at + 5 + length > joined.length) break;
      out.push({ flag: joined[at], payload: joined.slice(at + 5, at + 5 + length) });
      at += 5 + length;
    }
    this.buffered = joined.slice(at);
    return out;
  }
}

/** The status carried by a trailer frame. */
export function trailerStatus(payload: Uint8Array): { code: number; detail: string } {
  let code = 2;
  let detail = 'the reply had no status';
  for (const line of new TextDecoder().decode(payload).split('\r\n')) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key === 'grpc-status') code = Number(value);
    if (key === 'grpc-message') detail = decodeURIComponent(value);
  }
  return { code, detail };
}

/** A refusal by the web port itself (a 403 naming the Host it does not answer to, say), in its words. */
async function httpRefusal(response: Response): Promise<string> {
  const text = (await response.text().catch(() => '')).trim().slice(0, 500);
  return text ? `${text} (HTTP ${response.status})` : `HTTP ${response.status}`;
}

/** `extraHeaders` carry metadata of this call (the cloud's `authorization: Bearer <token>`). */
function post<Req>(path: string, req: Codec<Req>, message: object, signal?: AbortSignal, extraHeaders: Record<string, string> = {}): Promise<Response> {
  const body = req.encode(req.fromPartial(message)).finish();
  const framed = new Uint8Array(5 + body.length);
  new DataView(framed.buffer).setUint32(1, body.length);
  framed.set(body, 5);
  const headers: Record<string, string> = { ...extraHeaders, 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
  return fetch(path, { method: 'POST', headers, body: framed, signal });
}

/**
 * A unary call. Aborting `signal` abandons it (the browser drops the request, which cancels it on the
 * server): a deadline, such as AbortSignal.timeout(ms), rejects with DEADLINE_EXCEEDED (4) naming it.
 */
export async function unary<Req, Res>(
  path: string,
  req: Codec<Req>,
  res: Codec<Res>,
  message: object,
  extraHeaders: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Res> {
  try {
    return await transport.unary(path, req, res, message, withSession(extraHeaders), signal);
  } catch (err) {
    if (signal?.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') {
      throw new RpcError(4, path, `no answer before the page's deadline (${(signal.reason as Error).message})`);
    }
    throw err;
  }
}

async function unaryCall<Req, Res>(
  path: string,
  req: Codec<Req>,
  res: Codec<Res>,
  message: object,
  extraHeaders: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Res> {
  const response = await post(path, req, message, signal, extraHeaders);
  if (!response.ok) throw new RpcError(14, path, await httpRefusal(response));
  let reply: Res | undefined;
  let status = { code: 2, detail: 'the reply had no status' };
  for (const f of frames(new Uint8Array(await response.arrayBuffer()))) {
    if (f.flag === 0) reply = res.decode(f.payload);
    else status = trailerStatus(f.payload);
  }
  if (status.code !== 0 || reply === undefined) throw new RpcError(status.code, path, status.detail);
  return reply;
}

/**
 * A server-streaming call: `onMessage` gets each message as its frame arrives. Resolves when the stream
 * ends with status OK; rejects with an RpcError otherwise (a dropped connection is UNAVAILABLE, 14).
 * Aborting `signal` cancels the call, on the server too, and rejects with the AbortError itself.
 */
export function serverStream<Req, Res>(
  path: string,
  req: Codec<Req>,
  res: Codec<Res>,
  message: object,
  onMessage: (reply: Res) => void,
  signal?: AbortSignal,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  return transport.serverStream(path, req, res, message, onMessage, signal, withSession(extraHeaders));
}

async function grpcWebServerStream<Req, Res>(
  path: string,
  req: Codec<Req>,
  res: Codec<Res>,
  message: object,
  onMessage: (reply: Res) => void,
  signal: AbortSignal | undefined,
  extraHeaders: Record<string, string>,
): Promise<void> {
  let response: Response;
  try {
    response = await post(path, req, message, signal, extraHeaders);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new RpcError(14, path, `no connection (${(err as Error).message})`);
  }
  if (!response.ok || !response.body) throw new RpcError(14, path, await httpRefusal(response));
  const reader = response.body.getReader();
  const frames = new FrameReader();
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new RpcError(14, path, `the stream broke (${(err as Error).message})`);
    }
    if (chunk.done) throw new RpcError(14, path, 'the stream ended without a status');
    for (const f of frames.push(chunk.value)) {
      if (f.flag === 0) {
        onMessage(res.decode(f.payload));
        continue;
      }
      const status = trailerStatus(f.payload);
      await reader.cancel();
      if (status.code !== 0) throw new RpcError(status.code, path, status.detail);
      return;
    }
  }
}
