// werift's UDP sockets (ICE host candidates and TURN clients) get larger kernel buffers. A data channel
// carrying a stream sends bursts of ~1,200-byte datagrams; with the default receive buffer (212 KB on
// Linux, about a hundred such datagrams) a receiver busy for a few milliseconds drops them, and SCTP
// waits for a retransmission timeout (hundreds of ms): the 10 MB stream of npm run bench:webrtc stalled
// for up to 800 ms and ran at 2-3 MB/s, with the host's UDP RcvbufErrors counting the drops. The kernel
// clamps the size to net.core.rmem_max / wmem_max.
import { UdpTransport } from 'werift';

/** Asked of the kernel for each socket's receive and send buffers. */
export const UDP_BUFFER_BYTES = 4 * 1024 * 1024;

let applied = false;

export function enlargeWeriftUdpBuffers(): void {
  if (applied) return;
  applied = true;
  const proto = UdpTransport.prototype as unknown as { init(): Promise<void>; socket: import('node:dgram').Socket };
  const init = proto.init;
  if (typeof init !== 'function')
    throw new Error('werift: UdpTransport has no init to extend; check core/serving/webrtc/werift-udp.ts against this werift version');
  proto.init = async function (this: typeof proto) {
    await init.call(this);
    try {
      this.socket.setRecvBufferSize(UDP_BUFFER_BYTES);
      this.socket.setSendBufferSize(UDP_BUFFER_BYTES);
    } catch {
      // A kernel that refuses keeps its defaults: slower under load, not broken.
    }
  };
}
