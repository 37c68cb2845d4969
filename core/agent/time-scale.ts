// The agent's timeouts are whole minutes (SPEC.md). Tests and demos shrink them with
// PLATFORM_AGENT_TIME_SCALE (a factor > 0, default 1): 0.001 makes a minute last 60 ms. The configured
// values and their defaults stay as written; only the clock that measures them is scaled.
export const TIME_SCALE_ENV = 'PLATFORM_AGENT_TIME_SCALE';

export class TimeScale {
  constructor(readonly factor = 1) {
    if (!(factor > 0) || !Number.isFinite(factor)) throw new RangeError(`${TIME_SCALE_ENV} ${factor}: must be a number above 0`);
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env): TimeScale {
    const raw = env[TIME_SCALE_ENV];
    return new TimeScale(raw === undefined || raw === '' ? 1 : Number(raw));
  }

  minutes(n: number): number {
    return Math.max(1, Math.round(n * 60_000 * this.factor));
  }

  seconds(n: number): number {
    return Math.max(1, Math.round(n * 1000 * this.factor));
  }
}
