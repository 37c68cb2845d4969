// How many TailRobotPartLogs streams one API key may hold open at once (issue 27, finding 7). Every new
// batch of a part's entries is queued for each of its tails: 40 tails that never read, opened by one key,
// cost the cloud 464 ms of its one JavaScript thread on a single 10,000-entry batch (sizing, queueing and
// encoding each tail's first 4 MiB), while every other organization's calls waited.
import { resourceExhausted } from '../../core/serving/status-error.js';
import { describePrincipal, type Principal } from '../auth/principal.js';
import { principalKey } from '../datasync/upload-streams.js';
import { envWholeNumber } from '../../core/serving/env.js';

export const defaultMaxTailsPerPrincipal = 16;

/** PLATFORM_LOG_MAX_TAILS_PER_KEY: log tails one API key (or machine part) may hold open at once. */
export function maxTailsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber('PLATFORM_LOG_MAX_TAILS_PER_KEY', defaultMaxTailsPerPrincipal, env);
}

export class TailSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number = maxTailsFromEnv()) {}

  /** Takes a slot for `principal`, or RESOURCE_EXHAUSTED naming the limit. Call the returned function once, when the tail ends. */
  take(principal: Principal): () => void {
    const key = principalKey(principal);
    const held = this.open.get(key) ?? 0;
    if (held >= this.max) {
      throw resourceExhausted(
        `${describePrincipal(principal)} already has ${this.max} TailRobotPartLogs streams open, the limit (PLATFORM_LOG_MAX_TAILS_PER_KEY); close one first`,
      );
    }
    this.open.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }
}
