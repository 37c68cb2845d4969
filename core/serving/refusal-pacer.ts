// Paces the answers to refused requests per source address (issue 27, items 2 and 3). A refusal costs
// the server little, but a caller that gets it at once and asks again at once turns cheap refusals into
// a flood: four loops of 1 GiB POSTs, or of 128 KiB login names, kept a core busy with nothing but
// refusals and slowed every other tenant's reads. An address whose refusals pass a free allowance
// within a window waits for each further refusal, longer the more it has had (up to maxDelayMs), the
// way a login prompt slows a guesser: a caller that waits for its answer (as every loop does) is slowed
// to a few requests a second, and the server holds only a timer (and the request, unread) meanwhile.
//
// Only refusals count, never answered calls: a tenant behind the same address whose calls succeed is
// not slowed. A caller that opens more than maxHeldPerAddress refused requests at once is not held
// further: those are answered at once (answering costs less than holding without bound).
import type { EventEmitter } from 'node:events';

export interface RefusalPacerOptions {
  /** Refusals per address per window answered at once. Default 50. */
  freePerWindow?: number;
  /** The window refusals are counted in. Default 10 s. */
  windowMs?: number;
  /** Each refusal past the allowance waits this much longer than the one before. Default 25 ms. */
  stepMs?: number;
  /** The longest wait. Default 2 s. */
  maxDelayMs?: number;
  /** Refusals of one address held waiting at once; more are answered at once. Default 32. */
  maxHeldPerAddress?: number;
  /** Addresses remembered; the least recently refused are forgotten first. Default 10,000. */
  maxAddresses?: number;
  now?: () => number;
}

interface AddressCount {
  windowStart: number;
  refusals: number;
  held: number;
}

export class RefusalPacer {
  private readonly counts = new Map<string, AddressCount>();
  private readonly freePerWindow: number;
  private readonly windowMs: number;
  private readonly stepMs: number;
  private readonly maxDelayMs: number;
  private readonly maxHeldPerAddress: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;

  constructor(options: RefusalPacerOptions = {}) {
    this.freePerWindow = options.freePerWindow ?? 50;
    this.windowMs = options.windowMs ?? 10_000;
    this.stepMs = options.stepMs ?? 25;
    this.maxDelayMs = options.maxDelayMs ?? 2000;
    this.maxHeldPerAddress = options.maxHeldPerAddress ?? 32;
    this.maxAddresses = options.maxAddresses ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Counts one refusal of `address` and says how long to wait before answering it (0: at once). A
   * wait above 0 holds a place of the address until release(address) is called.
   */
  delayFor(address: string): number {
    const now = this.now();
    let count = this.counts.get(address);
    if (!count || now - count.windowStart >= this.windowMs) count = { windowStart: now, refusals: 0, held: count?.held ?? 0 };
    // Re-inserted: the Map stays in least-recently-refused order for eviction.
    this.counts.delete(address);
    this.counts.set(address, count);
    count.refusals++;
    this.evict();
    const excess = count.refusals - this.freePerWindow;
    if (excess <= 0 || count.held >= this.maxHeldPerAddress) return 0;
    count.held++;
    return Math.min(this.maxDelayMs, excess * this.stepMs);
  }

  /** Refusals of `address` waiting for their answer now. */
  heldFor(address: string): number {
    return this.counts.get(address)?.held ?? 0;
  }

  /** Gives back the place a wait of delayFor() held. */
  release(address: string): void {
    const count = this.counts.get(address);
    if (count && count.held > 0) count.held--;
  }

  /**
   * Runs answer() after the wait delayFor(address) gives. When `gone` (the caller's socket, say)
   * emits `goneEvent` first, the wait ends without answering: nobody is left to answer.
   */
  pace(address: string, answer: () => void, gone?: EventEmitter, goneEvent = 'close'): void {
    const wait = this.delayFor(address);
    if (wait === 0) return answer();
    const finish = (send: boolean) => {
      clearTimeout(timer);
      gone?.removeListener(goneEvent, onGone);
      this.release(address);
      if (send) answer();
    };
    const onGone = () => finish(false);
    const timer = setTimeout(() => finish(true), wait);
    gone?.once(goneEvent, onGone);
  }

  private evict(): void {
    while (this.counts.size > this.maxAddresses) {
      const oldest = this.counts.keys().next().value as string;
      // An address with refusals still held keeps its entry, or release() would lose its place.
      const entry = this.counts.get(oldest)!;
      this.counts.delete(oldest);
      if (entry.held > 0) {
        this.counts.set(oldest, entry);
        return;
      }
    }
  }
}
