// The data pipeline side of `platform-cloud worker` (scale-out mode, issue 33): takes window attempts
// from the pg-boss queue (window-queue.ts) and runs each with WindowRunner (pipeline-window.ts), over the
// organization's sealed segments and unsealed tail, as a serve process would have run it. A message is
// completed after its window is recorded (or found recorded by another process, or its pipeline gone or
// disabled); a message whose worker dies mid-window expires and goes to another worker, and recordRun
// records the window once (window-queue.ts says why); a message taken more than maxTakes times is
// recorded as a FAILED attempt instead of run again.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { WindowRunner } from './pipeline-window.js';
import type { PipelineStore } from './pipeline-store.js';
import { fromMessage, windowQueueName, type WindowMessage } from './window-queue.js';

export interface WindowWorkerOptions {
  boss: PgBoss;
  pipelines: PipelineStore;
  runner: WindowRunner;
  /** Windows run here at once. */
  slots: number;
  /** How this worker names itself in its log lines. Default `worker <host>:<pid>`. */
  name?: string;
  /** How often an idle slot asks the queue. Default 500 ms. */
  pollMs?: number;
  /**
   * Takes of one message (one window attempt) that may end without a record; the next take records the
   * attempt as FAILED instead of running it. Default 3 (PLATFORM_QUERY_PIPELINE_WINDOW_MAX_TAKES).
   */
  maxTakes?: number;
  /**
   * Test only (PLATFORM_TEST_PIPELINE_WINDOW_DELAY_MS): a wait after taking a window and before running
   * it, so that a test can kill the worker in the middle of a window. Never set in a deployment.
   */
  testDelayMs?: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export class WindowWorker {
  readonly name: string;
  private readonly loops: Promise<void>[] = [];
  private readonly stopping = new AbortController();

  constructor(private readonly options: WindowWorkerOptions) {
    this.name = options.name ?? `worker ${hostname()}:${process.pid}`;
  }

  start(): void {
    for (let i = 0; i < this.options.slots; i++) this.loops.push(this.slotLoop());
  }

  /** Takes no more windows and waits for the running ones (a run is bounded by the query's time limit). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled(this.loops);
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }

  private async slotLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        const [message] = await this.options.boss.fetch<WindowMessage>(windowQueueName, { batchSize: 1, includeMetadata: true });
        if (!message) await this.pause(this.options.pollMs ?? 500);
        else await this.handle(message);
      } catch (err) {
        this.options.logger?.error({ err: (err as Error).message }, 'pipeline worker: a queue message could not be handled');
        await this.pause(this.options.pollMs ?? 500);
      }
    }
  }

  private async handle(message: PgBoss.JobWithMetadata<WindowMessage>): Promise<void> {
    const { boss, pipelines, runner, logger } = this.options;
    const window = fromMessage(message.data);
    const where = { pipeline: window.pipelineId, dataStart: message.data.dataStart, dataEnd: message.data.dataEnd, attempt: window.attempt };
    try {
      const pipeline = await pipelines.find(window.pipelineId);
      if (!pipeline?.enabled) {
        // Deleted or disabled since it was queued: a disabled pipeline does not run (and does not backfill).
        await boss.complete(windowQueueName, message.id);
        return;
      }
      // pg-boss counts a message's takes after the first (retry_count): every take that ended without
      // completing it, a worker killed mid-window (its message expired) or one that failed it.
      const takes = message.retryCount + 1;
      const maxTakes = this.options.maxTakes ?? 3;
      if (takes > maxTakes) {
        // A window that stops every worker that runs it (a crash, the OOM killer) would otherwise be
        // taken again up to the queue's retry limit, and end with no run record at all.
        const error =
          `the window was taken from the queue ${takes} times and each worker stopped while running it ` +
          `(killed, out of memory, or the store unreachable); not run again (PLATFORM_QUERY_PIPELINE_WINDOW_MAX_TAKES=${maxTakes})`;
        const outcome = await runner.recordNotRun(pipeline, window, error, new Date());
        logger?.warn({ ...where, worker: this.name, takes, recorded: outcome.recorded }, 'data pipeline window not run: taken too often');
        await boss.complete(windowQueueName, message.id);
        return;
      }
      logger?.info({ ...where, worker: this.name, takes }, 'data pipeline window started');
      if (this.options.testDelayMs) await this.pause(this.options.testDelayMs);
      if (this.stopped) {
        // Handed back: another worker (or this one, started again) runs it.
        await boss.fail(windowQueueName, message.id, { reason: 'the worker is stopping' });
        return;
      }
      const outcome = await runner.run(pipeline, window, new Date());
      logger?.info(
        { ...where, worker: this.name, status: outcome.status, documents: outcome.documents },
        outcome.recorded ? 'data pipeline window recorded' : 'data pipeline window already recorded by another process',
      );
      await boss.complete(windowQueueName, message.id);
    } catch (err) {
      // The store could not be reached, say: nothing of the window was recorded; pg-boss tries it again.
      logger?.warn({ ...where, err: (err as Error).message }, 'data pipeline window not recorded; it is tried again');
      await boss.fail(windowQueueName, message.id, { reason: (err as Error).message });
    }
  }
}
