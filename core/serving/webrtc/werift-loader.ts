// What peer.ts takes from werift, behind one dynamic import (see peer.ts): imported by name here, so that a
// bundler keeps only the part of werift that is reached from RTCPeerConnection. werift's TURN client is
// repaired here, before the first connection can use it (werift-turn.ts), and its UDP sockets get larger
// kernel buffers (werift-udp.ts).
import { enlargeWeriftUdpBuffers } from './werift-udp.js';
import { repairWeriftTurn } from './werift-turn.js';

export { RTCPeerConnection } from 'werift';

repairWeriftTurn();
enlargeWeriftUdpBuffers();
