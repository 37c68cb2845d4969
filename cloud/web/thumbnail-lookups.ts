// The thumbnails' row lookups, taken in turn between organizations (issue 27, finding 7). Every thumbnail
// request reads its datum's row (scope, type, size, blob key) on one of the store's reader connections
// (3 by default, shared by every organization's reads) before anything else, and a request refused from
// that row (content over the size limit, a type without thumbnails) costs nothing but the lookup, so the
// attacker's loop comes straight back. In bench:isolation huge-thumbnails, one organization's twelve
// requests in flight (about a hundred a second, nine in ten refused) kept all the readers busy: another
// organization's 1-row read waited for a reader 10 ms at the median and up to 525 ms, where it waited
// none while idle. Here the lookups run PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS at a time (default 1, so
// thumbnails hold at most one reader and the other reads always find one), round robin between
// organizations (kit/fair-turns.ts), and an organization's lookups waiting past
// PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG are refused with 429 instead of queued.
import { envWholeNumber } from '../../core/serving/env.js';
import { FairTurns } from '../kit/fair-turns.js';
import { maxQueuedPerOrgFromEnv, tooManyWaiting } from './thumbnail-queue.js';

export const defaultConcurrentLookups = 1;

/** PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS: thumbnail row lookups that may hold a store reader at once. */
export function concurrentLookupsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber('PLATFORM_THUMBNAIL_CONCURRENT_LOOKUPS', defaultConcurrentLookups, env);
}

export class ThumbnailLookups {
  private readonly turns: FairTurns;

  constructor(
    concurrency = concurrentLookupsFromEnv(),
    private readonly maxWaitingPerOrg = maxQueuedPerOrgFromEnv(),
  ) {
    this.turns = new FairTurns(concurrency);
  }

  /** Lookups waiting for their turn (not running). */
  get waiting(): number {
    return this.turns.waiting;
  }

  /** Runs `lookup` when the turn of `org` comes; a 429 ThumbnailError when `org` already has the limit waiting. */
  run<T>(org: string, lookup: () => Promise<T>): Promise<T> {
    if (this.turns.waitingFor(org) >= this.maxWaitingPerOrg) return Promise.reject(tooManyWaiting(org, this.maxWaitingPerOrg));
    return this.turns.run(org, lookup);
  }
}
