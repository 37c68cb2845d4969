// Runs each enabled data pipeline once per scheduled window, catching up windows it missed while the
// cloud was down (a bounded number per pass), and writes the results to the pipeline's sink.
// Every pass is guarded: whatever one pipeline does (unreadable stages, a failing query, a sink write that
// fails) is recorded in its run history or logged, and the other pipelines and later passes go on. An
// unhandled rejection here would end the cloud.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { MqlRunner } from '../mql/mql-runner.js';
import type { DataPipeline, PipelineStore } from './pipeline-store.js';
import { nextTick } from './schedule.js';

export interface SchedulerOptions {
  /** How often due windows are looked for. Default 15 s. */
  intervalMs?: number;
  /** Windows run per pipeline per pass, so that a long outage is caught up gradually. Default 24. */
  maxWindowsPerPass?: number;
  logger?: Logger;
}

export class PipelineScheduler {
  private timer?: NodeJS.Timeout;
  private passing?: Promise<void>;

  constructor(
    private readonly pipelines: PipelineStore,
    private readonly mql: MqlRunner,
    private readonly options: SchedulerOptions = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.runDue(new Date()).catch((err: unknown) => this.options.logger?.error({ err }, 'data pipeline pass failed'));
    }, this.options.intervalMs ?? 15_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.passing;
  }

  /** Runs every window that ended at or before `now`. Overlapping calls share one pass. */
  runDue(now: Date): Promise<void> {
    this.passing ??= this.pass(now).finally(() => (this.passing = undefined));
    return this.passing;
  }

  private async pass(now: Date): Promise<void> {
    for (const pipeline of await this.pipelines.listEnabled()) {
      try {
        let start = pipeline.windowEnd;
        for (let i = 0; i < (this.options.maxWindowsPerPass ?? 24); i++) {
          const end = nextTick(pipeline.schedule, start);
          if (end > now) break;
          await this.runWindow(pipeline, start, end);
          start = end;
        }
      } catch (err) {
        this.options.logger?.error({ pipeline: pipeline.id, err }, 'data pipeline could not be scheduled; the others go on');
      }
    }
  }

  private async runWindow(p: DataPipeline, dataStart: Date, dataEnd: Date): Promise<void> {
    const startTime = new Date();
    const stages = [{ $match: { time_received: { $gte: dataStart, $lt: dataEnd } } }, ...p.stages];
    let docs: Record<string, unknown>[] = [];
    let errorMessage = '';
    try {
      if (p.unreadableStages) throw new Error(p.unreadableStages);
      docs = await this.mql.run(p.organizationId, stages, { sourceType: p.sourceType });
    } catch (err) {
      errorMessage = (err as Error).message;
      this.options.logger?.warn({ pipeline: p.id, err: errorMessage }, 'data pipeline run failed');
    }
    const run = { id: randomUUID(), pipelineId: p.id, dataStart, dataEnd, startTime };
    try {
      await this.pipelines.recordRun(
        { ...run, status: errorMessage ? 'FAILED' : 'COMPLETED', endTime: new Date(), documents: docs.length, errorMessage },
        docs,
      );
    } catch (err) {
      // The results could not be stored (too large, for instance): the window still gets a failed run.
      const message = `the results could not be stored: ${(err as Error).message}`;
      this.options.logger?.warn({ pipeline: p.id, err: message }, 'data pipeline run failed');
      await this.pipelines.recordRun({ ...run, status: 'FAILED', endTime: new Date(), documents: 0, errorMessage: message }, []);
    }
  }
}
