// Admission of user queries (SQL, MQL, pipelines, the PostgreSQL endpoint): at most `maxTotal` run at
// once, at most `maxPerOrg` of one organization. Extra queries wait; when a slot frees, organizations take
// turns (round robin), so one tenant's burst of heavy queries cannot starve another's single query. A
// query that waits longer than `maxWaitMs`, or arrives when its organization already has `maxQueuedPerOrg`
// waiting, is refused with RESOURCE_EXHAUSTED naming the limit.
import { resourceExhausted } from '../../core/serving/status-error.js';
import { histogram, secondsSince } from '../../core/serving/telemetry/metrics.js';

const waitTime = histogram('platform_query_admission_wait_seconds', 'Time a user query waited for its turn (0 when admitted at once)', []);
const queryTime = histogram(
  'platform_query_seconds',
  'Time a user query held its slot: from admission to its end (SQL, MQL, pipelines, PostgreSQL endpoint)',
  [],
);

export interface AdmissionLimits {
  maxTotal: number;
  maxPerOrg: number;
  maxWaitMs: number;
  maxQueuedPerOrg: number;
}

export const DEFAULT_ADMISSION: AdmissionLimits = { maxTotal: 3, maxPerOrg: 2, maxWaitMs: 10_000, maxQueuedPerOrg: 32 };

interface Waiter {
  admit: () => void;
}

export class QueryAdmission {
  readonly limits: AdmissionLimits;
  private running = 0;
  private readonly runningByOrg = new Map<string, number>();
  /** Waiting queries per organization, in arrival order; the Map's order is the round-robin order. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(limits: Partial<AdmissionLimits> = {}) {
    this.limits = { ...DEFAULT_ADMISSION, ...limits };
  }

  /** How many queries run now (for tests and the benchmark). */
  get active(): number {
    return this.running;
  }

  /** How many queries wait for their turn now. */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  /** Runs `fn` once admitted; the slot is released when it settles. */
  async run<T>(organizationId: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire(organizationId);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  acquire(organizationId: string): Promise<() => void> {
    const arrived = process.hrtime.bigint();
    if (!this.waiting.has(organizationId) && this.canRun(organizationId)) return Promise.resolve(this.take(organizationId, arrived));
    const queue = this.waiting.get(organizationId) ?? [];
    if (queue.length >= this.limits.maxQueuedPerOrg) {
      return Promise.reject(
        resourceExhausted(
          `query: ${queue.length} queries of organization ${organizationId} are already waiting to run ` +
            `(PLATFORM_QUERY_MAX_QUEUED_PER_ORG=${this.limits.maxQueuedPerOrg}); retry when earlier ones have finished`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve(this.take(organizationId, arrived));
        },
      };
      const timer = setTimeout(() => {
        const q = this.waiting.get(organizationId);
        const at = q?.indexOf(waiter) ?? -1;
        if (q && at >= 0) {
          q.splice(at, 1);
          if (q.length === 0) this.waiting.delete(organizationId);
        }
        reject(
          resourceExhausted(
            `query: waited ${this.limits.maxWaitMs} ms for a turn and none came ` +
              `(at most ${this.limits.maxPerOrg} queries per organization, PLATFORM_QUERY_CONCURRENCY_PER_ORG, and ` +
              `${this.limits.maxTotal} in total, PLATFORM_QUERY_CONCURRENCY, run at once); retry later`,
          ),
        );
      }, this.limits.maxWaitMs);
      queue.push(waiter);
      this.waiting.set(organizationId, queue);
    });
  }

  private canRun(organizationId: string): boolean {
    return this.running < this.limits.maxTotal && (this.runningByOrg.get(organizationId) ?? 0) < this.limits.maxPerOrg;
  }

  private take(organizationId: string, arrived: bigint): () => void {
    waitTime.observe(secondsSince(arrived));
    const admitted = process.hrtime.bigint();
    this.running++;
    this.runningByOrg.set(organizationId, (this.runningByOrg.get(organizationId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      queryTime.observe(secondsSince(admitted));
      this.running--;
      const left = (this.runningByOrg.get(organizationId) ?? 1) - 1;
      if (left === 0) this.runningByOrg.delete(organizationId);
      else this.runningByOrg.set(organizationId, left);
      this.admitNext();
    };
  }

  /** Admits waiters while slots are free, one organization at a time in turn. */
  private admitNext(): void {
    let progressed = true;
    while (progressed && this.running < this.limits.maxTotal) {
      progressed = false;
      for (const [org, queue] of this.waiting) {
        if (!this.canRun(org)) continue;
        const waiter = queue.shift()!;
        // Moving the organization to the back of the Map is what makes the turns round robin.
        this.waiting.delete(org);
        if (queue.length > 0) this.waiting.set(org, queue);
        waiter.admit();
        progressed = true;
        break;
      }
    }
  }
}
