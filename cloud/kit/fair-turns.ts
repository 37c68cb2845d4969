// Work that runs one job at a time (a writer connection, say), taken in turn between organizations: each
// organization's jobs wait in a queue of its own and the queues are served round robin, so one
// organization's burst waits behind itself, and another organization's single job runs next, not after
// the whole burst. Used by the log writer (`cloud/parts/part-logs.ts`) and the thumbnails' row lookups
// (`cloud/web/thumbnail-lookups.ts`); the thumbnail queue follows the same rule with its own limits
// (`cloud/web/thumbnail-queue.ts`).

interface Job {
  /** Its place in the fair order (start-time fair queueing): lower goes first. */
  start: number;
  run: () => Promise<unknown>;
}

export class FairTurns {
  private readonly queues = new Map<string, Job[]>();
  /** Where each key's next job starts: one past its newest job (kept while ahead of `now`). */
  private readonly finish = new Map<string, number>();
  /** The start of the job started last: a key idle until now starts here, not behind its own past. */
  private now = 0;
  private running = 0;

  constructor(private readonly concurrency = 1) {}

  /** Jobs waiting (not running). */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Jobs of `key` waiting (not running): what a caller bounds to refuse one key's flood early. */
  waitingFor(key: string): number {
    return this.queues.get(key)?.length ?? 0;
  }

  /**
   * Runs fn when the turn of `key` comes; resolves or rejects as fn does. Each job of a key starts one
   * place after the key's previous one, or at the current place if the key was idle, and the waiting job
   * with the lowest place goes next. So a key whose job is running waits behind a key that had none,
   * even when its next job arrived first.
   */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = Math.max(this.now, this.finish.get(key) ?? 0);
      this.finish.set(key, start + 1);
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = []));
      queue.push({ start, run: () => Promise.resolve().then(fn).then(resolve, reject) });
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.concurrency) {
      let best: Job[] | undefined;
      let bestKey = '';
      for (const [key, queue] of this.queues) {
        if (!best || queue[0].start < best[0].start) [best, bestKey] = [queue, key];
      }
      if (!best) return;
      const job = best.shift()!;
      if (best.length === 0) this.queues.delete(bestKey);
      this.now = Math.max(this.now, job.start);
      // A key with nothing waiting and no place past now would start at now anyway: forget it.
      for (const [key, finish] of this.finish) if (finish <= this.now && !this.queues.has(key)) this.finish.delete(key);
      this.running++;
      void job.run().finally(() => {
        this.running--;
        this.next();
      });
    }
  }
}
