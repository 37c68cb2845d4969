// The training queue: fair across organizations. Each organization's jobs wait first-in first-out in
// their own line; a free slot goes to the organization, among those with a job waiting and fewer than
// `perOrganization` running, that was served longest ago (never served first; ties by arrival): round
// robin. So one organization's flood of jobs, or its two-hour custom job, never keeps another
// organization's job waiting behind more than one job of each other organization (issue 27 finding 9).
export interface TrainingQueueOptions {
  /** Jobs running at once, in total. */
  concurrency: number;
  /** Jobs of one organization running at once. Default 1. */
  perOrganization?: number;
}

export class TrainingQueue {
  /** Waiting job ids per organization, oldest first. */
  private readonly waiting = new Map<string, string[]>();
  /** Organizations with waiting jobs, in the order they arrived. */
  private readonly turns: string[] = [];
  /** When each organization with jobs waiting or running last started one (a counter). */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private readonly runningPerOrg = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly concurrency: number;
  private readonly perOrganization: number;
  private paused = false;

  constructor(
    options: TrainingQueueOptions,
    private readonly run: (jobId: string) => Promise<void>,
  ) {
    const { concurrency, perOrganization = 1 } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${concurrency}`);
    if (!Number.isInteger(perOrganization) || perOrganization < 1) {
      throw new RangeError(`perOrganization must be an integer >= 1, got ${perOrganization}`);
    }
    this.concurrency = concurrency;
    this.perOrganization = perOrganization;
  }

  push(jobId: string, organizationId: string): void {
    const line = this.waiting.get(organizationId);
    if (line) line.push(jobId);
    else {
      this.waiting.set(organizationId, [jobId]);
      this.turns.push(organizationId);
    }
    this.pump();
  }

  /** Takes a job that has not started out of the queue; false when it is not waiting. */
  remove(jobId: string): boolean {
    for (const [org, line] of this.waiting) {
      const at = line.indexOf(jobId);
      if (at < 0) continue;
      line.splice(at, 1);
      if (line.length === 0) this.forget(org);
      return true;
    }
    return false;
  }

  get size(): { waiting: number; running: number } {
    let waiting = 0;
    for (const line of this.waiting.values()) waiting += line.length;
    return { waiting, running: this.running.size };
  }

  /** Starts no more jobs and waits for the running ones to end. */
  async drain(): Promise<void> {
    this.paused = true;
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  private forget(org: string): void {
    this.waiting.delete(org);
    const at = this.turns.indexOf(org);
    if (at >= 0) this.turns.splice(at, 1);
  }

  /** The organization whose turn it is: may start a job, and was served longest ago. */
  private nextOrganization(): string | undefined {
    let chosen: string | undefined;
    for (const org of this.turns) {
      if ((this.runningPerOrg.get(org) ?? 0) >= this.perOrganization) continue;
      if (chosen === undefined || (this.lastServed.get(org) ?? -1) < (this.lastServed.get(chosen) ?? -1)) chosen = org;
    }
    if (chosen !== undefined) this.lastServed.set(chosen, ++this.served);
    return chosen;
  }

  private pump(): void {
    while (!this.paused && this.running.size < this.concurrency) {
      const org = this.nextOrganization();
      if (org === undefined) return;
      const line = this.waiting.get(org)!;
      const id = line.shift()!;
      if (line.length === 0) this.forget(org);
      this.runningPerOrg.set(org, (this.runningPerOrg.get(org) ?? 0) + 1);
      const task: Promise<void> = this.run(id)
        .catch(() => undefined) // run() records its own failures on the job
        .finally(() => {
          this.running.delete(task);
          const left = (this.runningPerOrg.get(org) ?? 1) - 1;
          if (left > 0) this.runningPerOrg.set(org, left);
          else this.runningPerOrg.delete(org);
          if (left <= 0 && !this.waiting.has(org)) this.lastServed.delete(org);
          this.pump();
        });
      this.running.add(task);
    }
  }
}
