// Two FrameChannels joined in memory, for tests of gRPC over a data channel without WebRTC. Frames are
// delivered in order on a later tick; `hold()` stops delivering what one end sent, so that its send buffer
// fills (to test backpressure), until `release()`.
import type { FrameChannel } from '../webrtc/frame-channel.js';

export interface MemoryEnd extends FrameChannel {
  /** Frames sent from this end so far. */
  readonly sent: number;
  hold(): void;
  release(): void;
}

export function memoryFrameChannelPair(): [MemoryEnd, MemoryEnd] {
  const make = () => {
    const listeners: ((frame: Uint8Array) => void)[] = [];
    const closeListeners: (() => void)[] = [];
    const queue: Uint8Array[] = [];
    const waiters: { threshold: number; resolve: () => void }[] = [];
    let buffered = 0;
    let held = false;
    let isOpen = true;
    let sent = 0;
    let scheduled = false;
    const notify = () => {
      for (const waiter of [...waiters]) {
        if (buffered <= waiter.threshold || !isOpen) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    };
    const pump = () => {
      scheduled = false;
      while (!held && queue.length > 0 && isOpen) {
        const frame = queue.shift()!;
        buffered -= frame.length;
        for (const listener of peer!.listeners) listener(frame);
      }
      notify();
    };
    const schedule = () => {
      if (!scheduled) {
        scheduled = true;
        setImmediate(pump);
      }
    };
    let peer: { listeners: typeof listeners; shut(): void } | undefined;
    const end: MemoryEnd & { listeners: typeof listeners; link(p: typeof peer): void; shut(): void } = {
      listeners,
      link: (p) => (peer = p),
      get sent() {
        return sent;
      },
      get bufferedAmount() {
        return buffered;
      },
      get open() {
        return isOpen;
      },
      send(frame) {
        if (!isOpen) throw new Error('channel closed');
        sent++;
        queue.push(Uint8Array.from(frame));
        buffered += frame.length;
        schedule();
      },
      drained: (threshold) => (buffered <= threshold || !isOpen ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ threshold, resolve }))),
      onFrame: (listener) => void listeners.push(listener),
      onClose: (listener) => void closeListeners.push(listener),
      hold: () => (held = true),
      release: () => {
        held = false;
        schedule();
      },
      shut() {
        if (!isOpen) return;
        isOpen = false;
        notify();
        for (const listener of closeListeners) listener();
      },
      close() {
        setImmediate(() => {
          end.shut();
          peer!.shut();
        });
      },
    };
    return end;
  };
  const a = make();
  const b = make();
  a.link(b);
  b.link(a);
  return [a, b];
}
