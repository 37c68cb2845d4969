// One attempt of one data pipeline window: its MQL over the window's readings, then the run record and
// the sink documents (or a failed run and the window's next attempt) through PipelineStore.recordRun.
// Run by the scheduler itself on the embedded default (pipeline-scheduler.ts) and by `platform-cloud
// worker` in the scale-out mode (window-worker.ts), so a window fails, retries and records alike in both.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { MqlRunner } from '../mql/mql-runner.js';
import type { DataPipeline, PipelineStore } from './pipeline-store.js';

/** A window's attempt: what the scheduler decides is due, and what a queue message carries. */
export interface PipelineWindow {
  pipelineId: string;
  dataStart: Date;
  dataEnd: Date;
  /** 1 for the first run of the window, k + 1 for its k-th retry. */
  attempt: number;
}

export interface RetryPolicy {
  /** Further attempts of a failed window. Default 3 (PLATFORM_QUERY_PIPELINE_RETRIES). */
  retries?: number;
  /** Wait before the first retry; doubled for each next one. Default 60 s (PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S). */
  retryBackoffMs?: number;
}

/** What became of an attempt: recorded, or dropped because another process recorded it first. */
export type WindowOutcome = { recorded: boolean; status: 'COMPLETED' | 'FAILED'; documents: number };

export class WindowRunner {
  constructor(
    private readonly pipelines: PipelineStore,
    private readonly mql: Pick<MqlRunner, 'run'>,
    private readonly policy: RetryPolicy = {},
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /** Runs the window's attempt and records it; `now` is the time the next attempt's backoff counts from. */
  async run(p: DataPipeline, w: PipelineWindow, now: Date): Promise<WindowOutcome> {
    const { dataStart, dataEnd, attempt } = w;
    const startTime = new Date();
    const stages = [{ $match: { time_received: { $gte: dataStart, $lt: dataEnd } } }, ...p.stages];
    let docs: Record<string, unknown>[] = [];
    let errorMessage = '';
    try {
      if (p.unreadableStages) throw new Error(p.unreadableStages);
      docs = await this.mql.run(p.organizationId, stages, { sourceType: p.sourceType });
    } catch (err) {
      errorMessage = (err as Error).message;
      this.logger?.warn({ pipeline: p.id, attempt, err: errorMessage }, 'data pipeline run failed');
    }
    const run = { id: randomUUID(), pipelineId: p.id, dataStart, dataEnd, startTime };
    try {
      if (errorMessage) return await this.recordFailure(run, errorMessage, attempt, now);
      const recorded = await this.pipelines.recordRun(
        { ...run, status: 'COMPLETED', endTime: new Date(), documents: docs.length, errorMessage },
        docs,
        undefined,
        attempt,
      );
      return { recorded, status: 'COMPLETED', documents: docs.length };
    } catch (err) {
      // The results could not be stored (too large, for instance): the window still gets a failed run.
      const message = `the results could not be stored: ${(err as Error).message}`;
      this.logger?.warn({ pipeline: p.id, attempt, err: message }, 'data pipeline run failed');
      return this.recordFailure(run, message, attempt, now);
    }
  }

  /**
   * Records the attempt as failed without running it (a queue message taken more often than its cap:
   * window-worker.ts), with the same next attempt as a run that failed.
   */
  async recordNotRun(p: DataPipeline, w: PipelineWindow, message: string, now: Date): Promise<WindowOutcome> {
    const { dataStart, dataEnd, attempt } = w;
    this.logger?.warn({ pipeline: p.id, attempt, err: message }, 'data pipeline run failed');
    return this.recordFailure({ id: randomUUID(), pipelineId: p.id, dataStart, dataEnd, startTime: new Date() }, message, attempt, now);
  }

  private async recordFailure(
    run: { id: string; pipelineId: string; dataStart: Date; dataEnd: Date; startTime: Date },
    message: string,
    attempt: number,
    now: Date,
  ): Promise<WindowOutcome> {
    const { retry, note } = this.retryAfter(attempt, now);
    const recorded = await this.pipelines.recordRun(
      { ...run, status: 'FAILED', endTime: new Date(), documents: 0, errorMessage: message + note },
      [],
      retry,
      attempt,
    );
    return { recorded, status: 'FAILED', documents: 0 };
  }

  /** The next attempt after a failed `attempt` (none after the last), and what the run record says about it. */
  private retryAfter(attempt: number, now: Date): { retry?: { attempts: number; nextAttempt: Date }; note: string } {
    const total = 1 + (this.policy.retries ?? 3);
    if (attempt >= total) return { note: ` (attempt ${attempt} of ${total}; not retried)` };
    const nextAttempt = new Date(now.getTime() + (this.policy.retryBackoffMs ?? 60_000) * 2 ** (attempt - 1));
    return { retry: { attempts: attempt, nextAttempt }, note: ` (attempt ${attempt} of ${total}; retried from ${nextAttempt.toISOString()})` };
  }
}
