// A small gRPC-Web client over fetch: the page's calls go to the same RPCs gRPC clients use, with the
// generated message codecs. Every call carries the page's session id (metadata platform-sid).
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

/** `extraHeaders` carry metadata of this call (the cloud's `authorization: Bearer <token>`). */
export async function unary<Req, Res>(
  path: string,
  req: Codec<Req>,
  res: Codec<Res>,
  message: object,
  extraHeaders: Record<string, string> = {},
): Promise<Res> {
  const body = req.encode(req.fromPartial(message)).finish();
  const framed = new Uint8Array(5 + body.length);
  new DataView(framed.buffer).setUint32(1, body.length);
  framed.set(body, 5);
  const headers: Record<string, string> = { ...extraHeaders, 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
  if (sessionId) headers['platform-sid'] = sessionId;
  const response = await fetch(path, { method: 'POST', headers, body: framed });
  if (!response.ok) throw new RpcError(14, path, `HTTP ${response.status}`);
  let reply: Res | undefined;
  let code = 2;
  let detail = 'the reply had no status';
  for (const f of frames(new Uint8Array(await response.arrayBuffer()))) {
    if (f.flag === 0) reply = res.decode(f.payload);
    else {
      for (const line of new TextDecoder().decode(f.payload).split('\r\n')) {
        const colon = line.indexOf(':');
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key === 'grpc-status') code = Number(value);
        if (key === 'grpc-message') detail = decodeURIComponent(value);
      }
    }
  }
  if (code !== 0 || reply === undefined) throw new RpcError(code, path, detail);
  return reply;
}
