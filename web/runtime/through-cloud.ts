// The control page opened from the cloud's Machines view (the cloud serves it at /control/?part=<id>):
// its calls cannot go to a web port of the machine, which the browser may not reach at all, so they go
// over a WebRTC data channel to the machine, dialled through the cloud's signaling with the key signed in
// to the cloud's page in this tab. Loaded only in that case (a chunk of its own): the page served by the
// machine itself speaks gRPC-Web to its own origin and never loads WebRTC code.
import { loadSession, renewSession } from '../shared/cloud-session.js';
import { RpcError, useTransport } from '../shared/grpc-web-client.js';
import { dialThroughCloud, type MachineConnection } from '../shared/webrtc/dial.js';

const UNAUTHENTICATED = 16;

/**
 * Connects to machine part `partId` and makes the page's calls use the data channel. A token that expired
 * since sign-in is renewed once from the stored key. Rejects with the cloud's or the browser's words.
 */
export async function connectThroughCloud(partId: string): Promise<MachineConnection> {
  let session = loadSession();
  if (!session) throw new Error("not signed in to the cloud in this tab: sign in on the cloud's page and open the machine from its Machines view");
  let connection: MachineConnection;
  try {
    connection = await dialThroughCloud({ host: partId, token: session.token });
  } catch (err) {
    if (!(err instanceof RpcError) || err.code !== UNAUTHENTICATED) throw err;
    session = await renewSession(session);
    connection = await dialThroughCloud({ host: partId, token: session.token });
  }
  useTransport(connection.transport);
  return connection;
}
