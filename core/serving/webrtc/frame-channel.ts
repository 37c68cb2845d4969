// The narrow view of a data channel that gRPC-over-WebRTC needs: whole binary frames in order, the send
// buffer's size and a signal when it drains, and close. peer.ts adapts werift's RTCDataChannel to it; a
// test can join two in memory (core/serving/testing/memory-frame-channel.ts).
import type { FrameSink } from '../../../plugins/formats/webrtc-framing/framing.js';

export interface FrameChannel extends FrameSink {
  onFrame(listener: (frame: Uint8Array) => void): void;
  /** Called once when the channel closes, from either end. */
  onClose(listener: () => void): void;
  close(): void;
}
