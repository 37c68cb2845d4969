// Log deduplication (SPEC.md "Limits"): a message output 3 times in the past 10 seconds is noisy.
// From then on, repeats are suppressed: the first suppressed repeat is replaced by a notice, and when
// the 10-second window that made it noisy has passed, one line reports how many repeats were dropped.

export const NOISY_COUNT = 3;
export const NOISY_WINDOW_MS = 10_000;

export type Verdict =
  | { action: 'emit' }
  /** Drop this line, but say once that repeats are being suppressed. */
  | { action: 'notice' }
  | { action: 'drop' };

export interface SuppressedReport {
  key: string;
  count: number;
}

interface KeyState {
  times: number[];
  noisyUntil?: number;
  suppressed: number;
}

export class Deduplicator {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly count = NOISY_COUNT,
    private readonly windowMs = NOISY_WINDOW_MS,
  ) {}

  check(key: string, now: number): Verdict {
    let state = this.keys.get(key);
    if (!state) {
      state = { times: [], suppressed: 0 };
      this.keys.set(key, state);
    }
    if (state.noisyUntil !== undefined && now < state.noisyUntil) {
      state.suppressed++;
      return state.suppressed === 1 ? { action: 'notice' } : { action: 'drop' };
    }
    state.times = state.times.filter((t) => now - t < this.windowMs);
    state.times.push(now);
    if (state.times.length >= this.count) {
      state.noisyUntil = now + this.windowMs;
      state.times = [];
    }
    return { action: 'emit' };
  }

  /** Ends the noisy windows that are over; returns the messages whose repeats were dropped, with counts. */
  sweep(now: number): SuppressedReport[] {
    const reports: SuppressedReport[] = [];
    for (const [key, state] of this.keys) {
      if (state.noisyUntil !== undefined && now >= state.noisyUntil) {
        if (state.suppressed > 0) reports.push({ key, count: state.suppressed });
        state.noisyUntil = undefined;
        state.suppressed = 0;
      }
      if (state.noisyUntil === undefined && state.times.every((t) => now - t >= this.windowMs)) this.keys.delete(key);
    }
    return reports;
  }
}
