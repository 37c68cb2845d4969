// Server-streaming gRPC-Web calls (TailRobotPartLogs, DownloadModelArtefact): the reply's frames are read
// as they arrive and each message is handed on at once; the trailer frame ends the call with its status.
// The token is the signed-in session's (sessionStorage, kept current by CloudApi's renewals); an expired
// one is renewed once from the stored key.
import { RpcError } from '../../shared/grpc-web-client.js';
import { loadSession, renewSession } from '../session.js';
import type { Method, Partial2 } from './client.js';
import { FrameReader, trailerStatus } from './grpc-web-frames.js';

const UNAUTHENTICATED = 16;

async function streamOnce<Req, Res>(m: Method<Req, Res>, message: Partial2<Req>, onMessage: (message: Res) => void, signal?: AbortSignal): Promise<void> {
  const body = m.req.encode(m.req.fromPartial(message as object)).finish();
  const framed = new Uint8Array(5 + body.length);
  new DataView(framed.buffer).setUint32(1, body.length);
  framed.set(body, 5);
  const headers: Record<string, string> = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
  const session = loadSession();
  if (session) headers.authorization = `Bearer ${session.token}`;
  const response = await fetch(m.path, { method: 'POST', headers, body: framed, signal });
  if (!response.ok || !response.body) throw new RpcError(14, m.path, `HTTP ${response.status}`);
  const reader = response.body.getReader();
  const frames = new FrameReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const f of frames.push(value)) {
      if (f.flag === 0) {
        onMessage(m.res.decode(f.payload));
        continue;
      }
      const { code, detail } = trailerStatus(f.payload);
      if (code !== 0) throw new RpcError(code, m.path, detail);
      return;
    }
  }
  throw new RpcError(14, m.path, 'the stream ended without a status');
}

/**
 * Calls a server-streaming method; resolves when the server ends the stream with OK and rejects with
 * the cloud's own status otherwise. Aborting `signal` ends it (fetch rejects with an AbortError).
 */
export async function serverStream<Req, Res>(
  m: Method<Req, Res>,
  message: Partial2<Req>,
  onMessage: (message: Res) => void,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await streamOnce(m, message, onMessage, signal);
  } catch (err) {
    const session = loadSession();
    if (!(err instanceof RpcError) || err.code !== UNAUTHENTICATED || !/expired/i.test(err.message) || !session) throw err;
    await renewSession(session);
    await streamOnce(m, message, onMessage, signal);
  }
}
