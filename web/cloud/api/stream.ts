// Server-streaming gRPC-Web calls (TailRobotPartLogs, DownloadModelArtefact): the reply's frames are read
// as they arrive and each message is handed on at once; the trailer frame ends the call with its status.
// The token is the signed-in session's (sessionStorage, kept current by CloudApi's renewals); an expired
// one is renewed once from the stored key.
import { RpcError, serverStream as streamCall } from '../../shared/grpc-web-client.js';
import { loadSession, renewSession } from '../session.js';
import type { Method, Partial2 } from './client.js';

const UNAUTHENTICATED = 16;

function streamOnce<Req, Res>(m: Method<Req, Res>, message: Partial2<Req>, onMessage: (message: Res) => void, signal?: AbortSignal): Promise<void> {
  const session = loadSession();
  const headers: Record<string, string> = session ? { authorization: `Bearer ${session.token}` } : {};
  return streamCall(m.path, m.req, m.res, message as object, onMessage, signal, headers);
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
