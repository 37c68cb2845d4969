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
// elected through a PostgreSQL advisory lock (options.election). There a pass does not run the due windows
// itself: it sends each window's attempt to the pg-boss queue (options.dispatch, window-queue.ts), and
// `platform-cloud worker` processes run them (window-worker.ts). The scheduler still decides what is
// due, from the store, as here: a window after the pipeline's progress (window_end), or a failed window
// whose next attempt is due. A window that is queued or running is therefore due again at the next
// pass; it is not enqueued again, because its message is named after the pipeline, the window and the
// attempt (window-queue.ts), and pg-boss stores a message of a name it holds once. That is the first
// guard; the second is PipelineStore.recordRun, which records an attempt once whichever process runs it,
// so two schedulers that overlap briefly (a leader cut off that does not know it yet), a message sent
// again after pg-boss archived the first, or two workers given the same message all record each window once.
import type { Logger } from 'pino';
import { LeaderElection } from '../../store/pg-leader.js';
import type { MqlRunner } from '../mql/mql-runner.js';
import type { DataPipeline, PipelineStore } from './pipeline-store.js';
import { WindowRunner, type PipelineWindow } from './pipeline-window.js';
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
  /** The scale-out mode: due windows go to the queue instead of running here. */
  dispatch?: WindowDispatch;
  logger?: Logger;
}

/** Sends a due window's attempt to whoever runs it (the scale-out queue, window-queue.ts). */
export interface WindowDispatch {
  /** True if it was sent now, false if that attempt was sent before. */
  send(window: PipelineWindow): Promise<boolean>;
}

export class PipelineScheduler {
  private timer?: NodeJS.Timeout;
  private passing?: Promise<void>;
  private election?: LeaderElection;
  private readonly runner: WindowRunner;

  constructor(
    private readonly pipelines: PipelineStore,
    mql: Pick<MqlRunner, 'run'>,
    private readonly options: SchedulerOptions = {},
  ) {
    this.runner = new WindowRunner(pipelines, mql, options, options.logger);
  }

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

  /** Runs one window's `attempt`-th attempt here and records it, or (scale-out) sends it to the queue. */
  private async runWindow(p: DataPipeline, dataStart: Date, dataEnd: Date, attempt: number, now: Date): Promise<void> {
    const window = { pipelineId: p.id, dataStart, dataEnd, attempt };
    if (!this.options.dispatch) {
      await this.runner.run(p, window, now);
      return;
    }
    if (await this.options.dispatch.send(window)) {
      this.options.logger?.info({ pipeline: p.id, dataStart, dataEnd, attempt }, 'data pipeline window queued');
    }
  }
}
