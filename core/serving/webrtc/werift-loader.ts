// What peer.ts takes from werift, behind one dynamic import (see peer.ts): imported by name here, so that a
// bundler keeps only the part of werift that is reached from RTCPeerConnection.
export { RTCPeerConnection } from 'werift';
