// ICE candidates between peer.ts's form and the signaling protos' ICECandidate.
import type { ICECandidate, ICEServer } from '../../../gen/platform/rpc/webrtc/v1/signaling.js';
import type { IceCandidate, IceServer } from './peer.js';

/** The longest candidate line taken from the wire (a real one is under 200 characters). */
const MAX_CANDIDATE_CHARS = 1024;

export const toWireCandidate = (c: IceCandidate): ICECandidate => ({
  candidate: c.candidate,
  sdpMid: c.sdpMid,
  sdpmLineIndex: c.sdpMLineIndex,
  usernameFragment: c.usernameFragment,
});

/** Throws an error naming the field for a candidate that cannot be one. */
export function fromWireCandidate(c: ICECandidate | undefined): IceCandidate {
  if (!c) throw new Error('candidate: missing');
  if (c.candidate.length > MAX_CANDIDATE_CHARS) throw new Error(`candidate: longer than ${MAX_CANDIDATE_CHARS} characters`);
  return { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpmLineIndex, usernameFragment: c.usernameFragment };
}

export const fromWireIceServers = (servers: readonly ICEServer[]): IceServer[] =>
  servers.map((s) => ({ urls: [...s.urls], username: s.username || undefined, credential: s.credential || undefined }));
