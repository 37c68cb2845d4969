// First-in first-out queue of job ids, running at most `concurrency` jobs at a time.
export class TrainingQueue {
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private paused = false;

  constructor(
    private readonly concurrency: number,
    private readonly run: (jobId: string) => Promise<void>,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${concurrency}`);
  }

  push(jobId: string): void {
    this.waiting.push(jobId);
    this.pump();
  }

  /** Takes a job that has not started out of the queue; false when it is not waiting. */
  remove(jobId: string): boolean {
    const at = this.waiting.indexOf(jobId);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    return true;
  }

  get size(): { waiting: number; running: number } {
    return { waiting: this.waiting.length, running: this.running.size };
  }

  /** Starts no more jobs and waits for the running ones to end. */
  async drain(): Promise<void> {
    this.paused = true;
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    while (!this.paused && this.running.size < this.concurrency && this.waiting.length) {
      const id = this.waiting.shift()!;
      const task: Promise<void> = this.run(id)
        .catch(() => undefined) // run() records its own failures on the job
        .finally(() => {
          this.running.delete(task);
          this.pump();
        });
      this.running.add(task);
    }
  }
}
