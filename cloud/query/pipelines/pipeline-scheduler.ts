// Runs each enabled data pipeline once per scheduled window, catching up windows it missed while the
// cloud was down (a bounded number per pass), and writes the results to the pipeline's sink.
// Every pass is guarded: whatever one pipeline does (unreadable stages, a failing query, a sink write that
// fails) is recorded in its run history or logged, and the other pipelines and later passes go on. An
// unhandled rejection here would end the cloud.
//
// A failed window is tried again: up to `retries` more times, the k-th retry no earlier than
// retryBackoffMs * 2^(k-1) after the attempt before it (60 s, 120 s, 240 s by default). A window can fail
// for reasons that pass (the memory guard stopped its query while another tenant inflated the process,
// no admission turn, a timeout under load); before, it stayed FAILED for good, as the scheduler had moved
// past it (issue 27, finding 8). Every attempt is its own run record, so the history shows the failures
// and then the COMPLETED run of the same window; a window whose last attempt failed keeps no sink documents
// from its attempts, and one that failed every attempt stays FAILED (its last error says so).
//
// In the scale-out mode every cloud process runs a scheduler, and one at a time makes passes: the one
// elected through a PostgreSQL advisory lock (options.election). Two that overlap briefly (a leader cut
// off that does not know it yet) record each window once: PipelineStore.recordRun drops an attempt that
// another process has recorded.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LeaderElection } from '../../store/pg-leader.js';
import type { MqlRunner } from '../mql/mql-runner.js';
import type { DataPipeline, PipelineStore } from './pipeline-store.js';
import { nextTick } from './schedule.js';

export interface SchedulerOptions {
  /** How often due windows are looked for. Default 15 s. */
  intervalMs?: number;
  /** Windows run per pipeline per pass, so that a long outage is caught up gradually. Default 24. */
  maxWindowsPerPass?: number;
  /** Further attempts of a failed window. Default 3 (PLATFORM_QUERY_PIPELINE_RETRIES). */
  retries?: number;
  /** Wait before the first retry; doubled for each next one. Default 60 s (PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S). */
  retryBackoffMs?: number;
  /**
   * The scale-out mode: the cloud's PostgreSQL. Every process runs a scheduler, and only the one elected
   * through LeaderElection (cloud/store/pg-leader.ts) makes passes; absent, this process alone does.
   */
  election?: { url: string };
  logger?: Logger;
}

export class PipelineScheduler {
  private timer?: NodeJS.Timeout;
  private passing?: Promise<void>;
  private election?: LeaderElection;

  constructor(
    private readonly pipelines: PipelineStore,
    private readonly mql: Pick<MqlRunner, 'run'>,
    private readonly options: SchedulerOptions = {},
  ) {}

  start(): void {
    const election = this.options.election;
    if (election) {
      this.election = LeaderElection.start({
        url: election.url,
        name: 'platform-data-pipelines',
        onLeader: () => this.options.logger?.info('this process now runs the data pipelines'),
        onError: (err) => this.options.logger?.warn({ err: err.message }, 'data pipeline election: database unreachable'),
      });
    }
    this.timer = setInterval(() => {
      if (this.election && !this.election.isLeader) return;
      this.runDue(new Date()).catch((err: unknown) => this.options.logger?.error({ err }, 'data pipeline pass failed'));
    }, this.options.intervalMs ?? 15_000);
    this.timer.unref();
  }

  /** Whether this process makes the passes (always, without an election). */
  get leads(): boolean {
    return this.election ? this.election.isLeader : true;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.passing;
    await this.election?.stop();
  }

  /** Runs every window that ended at or before `now`. Overlapping calls share one pass. */
  runDue(now: Date): Promise<void> {
    this.passing ??= this.pass(now).finally(() => (this.passing = undefined));
    return this.passing;
  }

  private async pass(now: Date): Promise<void> {
    for (const pipeline of await this.pipelines.listEnabled()) {
      try {
        const budget = this.options.maxWindowsPerPass ?? 24;
        let ran = 0;
        let start = pipeline.windowEnd;
        for (; ran < budget; ran++) {
          const end = nextTick(pipeline.schedule, start);
          if (end > now) break;
          await this.runWindow(pipeline, start, end, 1, now);
          start = end;
        }
        // Failed windows whose next attempt is due share the pass's budget with the new ones.
        if (ran < budget) {
          for (const retry of await this.pipelines.dueRetries(pipeline.id, now, budget - ran)) {
            await this.runWindow(pipeline, retry.dataStart, retry.dataEnd, retry.attempts + 1, now);
          }
        }
      } catch (err) {
        this.options.logger?.error({ pipeline: pipeline.id, err }, 'data pipeline could not be scheduled; the others go on');
      }
    }
  }

  /** Runs one window, its `attempt`-th attempt, and records the run (and the next attempt if it failed). */
  private async runWindow(p: DataPipeline, dataStart: Date, dataEnd: Date, attempt: number, now: Date): Promise<void> {
    const startTime = new Date();
    const stages = [{ $match: { time_received: { $gte: dataStart, $lt: dataEnd } } }, ...p.stages];
    let docs: Record<string, unknown>[] = [];
    let errorMessage = '';
    try {
      if (p.unreadableStages) throw new Error(p.unreadableStages);
      docs = await this.mql.run(p.organizationId, stages, { sourceType: p.sourceType });
    } catch (err) {
      errorMessage = (err as Error).message;
      this.options.logger?.warn({ pipeline: p.id, attempt, err: errorMessage }, 'data pipeline run failed');
    }
    const run = { id: randomUUID(), pipelineId: p.id, dataStart, dataEnd, startTime };
    try {
      if (errorMessage) {
        const { retry, note } = this.retryAfter(attempt, now);
        await this.pipelines.recordRun({ ...run, status: 'FAILED', endTime: new Date(), documents: 0, errorMessage: errorMessage + note }, [], retry, attempt);
      } else
        await this.pipelines.recordRun({ ...run, status: 'COMPLETED', endTime: new Date(), documents: docs.length, errorMessage }, docs, undefined, attempt);
    } catch (err) {
      // The results could not be stored (too large, for instance): the window still gets a failed run.
      const message = `the results could not be stored: ${(err as Error).message}`;
      this.options.logger?.warn({ pipeline: p.id, attempt, err: message }, 'data pipeline run failed');
      const { retry, note } = this.retryAfter(attempt, now);
      await this.pipelines.recordRun({ ...run, status: 'FAILED', endTime: new Date(), documents: 0, errorMessage: message + note }, [], retry, attempt);
    }
  }

  /** The next attempt after a failed `attempt` (none after the last), and what the run record says about it. */
  private retryAfter(attempt: number, now: Date): { retry?: { attempts: number; nextAttempt: Date }; note: string } {
    const total = 1 + (this.options.retries ?? 3);
    if (attempt >= total) return { note: ` (attempt ${attempt} of ${total}; not retried)` };
    const nextAttempt = new Date(now.getTime() + (this.options.retryBackoffMs ?? 60_000) * 2 ** (attempt - 1));
    return { retry: { attempts: attempt, nextAttempt }, note: ` (attempt ${attempt} of ${total}; retried from ${nextAttempt.toISOString()})` };
  }
}
