// A clock for the network state machine's minute-long timers: advance() moves time and runs what is
// due, letting each callback's promise chain (against in-memory fakes) settle before the next.
import type { Clock } from '../network/clock.js';

export class FakeClock implements Clock {
  private t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      const due = [...this.timers.entries()].filter(([, v]) => v.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
      await settle();
    }
    this.t = end;
  }
}

// In-memory fakes resolve at once: a macrotask turn runs every queued microtask.
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
