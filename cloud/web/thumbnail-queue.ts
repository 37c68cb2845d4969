// The thumbnail child's queue, fair between organizations (issue 27, finding 7): one queue per
// organization, served in turn (round robin), so one organization's burst of large images does not make
// another's 32x32 thumbnail wait behind all of it (it waited 23.9 s behind one organization's six
// requests). Jobs hold no content while they wait: it is read when their turn comes.
import { ThumbnailError } from './thumbnail-error.js';
import { envWholeNumber } from '../../core/serving/env.js';

export const defaultMaxQueuedPerOrg = 32;

/** PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG: thumbnails one organization may have waiting. */
export function maxQueuedPerOrgFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber('PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG', defaultMaxQueuedPerOrg, env);
}

/** The refusal of a thumbnail request whose organization already has `max` waiting (the queue, the row lookups). */
export function tooManyWaiting(org: string, max: number): ThumbnailError {
  return new ThumbnailError(429, `organization ${org} already has ${max} thumbnails waiting, the limit (PLATFORM_THUMBNAIL_MAX_QUEUED_PER_ORG); retry shortly`);
}

export class FairQueue<T> {
  private readonly queues = new Map<string, T[]>();
  /** Organizations with waiting jobs, in the order they are served next. */
  private readonly turn: string[] = [];

  constructor(private readonly maxPerOrg: number) {}

  get length(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Adds a job of `org`; a 429 ThumbnailError when the organization already has maxPerOrg waiting. */
  push(org: string, job: T): void {
    let queue = this.queues.get(org);
    if (!queue) {
      queue = [];
      this.queues.set(org, queue);
      this.turn.push(org);
    }
    if (queue.length >= this.maxPerOrg) {
      throw tooManyWaiting(org, this.maxPerOrg);
    }
    queue.push(job);
  }

  /** The next job: the first of the organization whose turn it is, which then goes to the back of the line. */
  shift(): T | undefined {
    const org = this.turn.shift();
    if (org === undefined) return undefined;
    const queue = this.queues.get(org)!;
    const job = queue.shift();
    if (queue.length > 0) this.turn.push(org);
    else this.queues.delete(org);
    return job;
  }

  /** Removes and returns every waiting job. */
  drain(): T[] {
    const all: T[] = [];
    for (let job = this.shift(); job !== undefined; job = this.shift()) all.push(job);
    return all;
  }
}
