// The data pipeline queue of the scale-out mode: a pg-boss queue (pg-boss 10, pinned: the line that
// runs on Node 20) in the cloud's PostgreSQL, next to the training queue (cloud/mltraining/worker-queue.ts).
// The elected scheduler of the `serve` processes puts each due window's attempt on it
// (BossWindowDispatch); `platform-cloud worker` processes take them (window-worker.ts). With no worker
// running, the messages wait in the queue, and the windows run once a worker starts.
//
// Once per attempt: a message's id is derived from the pipeline, the window and the attempt, and pg-boss
// inserts a message whose id it holds already as nothing (ON CONFLICT DO NOTHING), so the scheduler's
// passes, which find a queued or running window due again, and a second scheduler overlapping the
// leader, enqueue it once. Chosen over a singleton policy of the queue: pg-boss's 'singleton' and
// 'stately' policies only hold back a second message while the first is queued or active, so a pass
// that read the pipeline's progress just before a worker recorded the window would queue it again
// after the first message completed; the id also covers that (completed messages are kept 12 hours).
// PipelineStore.recordRun stays the last word: a window is recorded once whatever runs it.
//
// A worker killed while running a window: its message stays active until it expires
// (PLATFORM_QUERY_PIPELINE_WINDOW_EXPIRY_S after it was taken), then pg-boss (the maintenance that
// every worker runs) gives it to another worker. The expiry must be longer than a window's run (the
// query's time limit, its wait for a turn, the sink write), or a slow window is also given to a second
// worker; that costs a second run, not a second record. A window that stops every worker that runs it
// is not given out up to the retry limit below: the worker that takes it more than maxTakes times
// records the attempt FAILED without running it (window-worker.ts).
import type PgBoss from 'pg-boss';
import { messageIdOf, startBoss } from '../../store/pg-boss-queue.js';
import type { WindowDispatch } from './pipeline-scheduler.js';
import type { PipelineWindow } from './pipeline-window.js';

export const windowQueueName = 'platform-pipeline-windows';

/** A message: the window's attempt, its times as ISO strings (pg-boss stores JSON). */
export interface WindowMessage {
  pipelineId: string;
  dataStart: string;
  dataEnd: string;
  attempt: number;
}

export const toMessage = (w: PipelineWindow): WindowMessage => ({
  pipelineId: w.pipelineId,
  dataStart: w.dataStart.toISOString(),
  dataEnd: w.dataEnd.toISOString(),
  attempt: w.attempt,
});

export const fromMessage = (m: WindowMessage): PipelineWindow => ({
  pipelineId: m.pipelineId,
  dataStart: new Date(m.dataStart),
  dataEnd: new Date(m.dataEnd),
  attempt: m.attempt,
});

export interface WindowQueueOptions {
  /** Workers run pg-boss's maintenance (expiring the messages of dead workers); serve processes need not. */
  supervise: boolean;
  onError?: (err: Error) => void;
}

/** Starts pg-boss on the database and makes the window queue. */
export function openWindowQueue(url: string, options: WindowQueueOptions): Promise<PgBoss> {
  // A message that fails (its worker could not reach the database, say) is tried again, not dropped:
  // the window's own failures are run records and retries of the scheduler, not pg-boss retries.
  return startBoss(
    url,
    { name: windowQueueName, retryLimit: 1000, retryDelay: 2 },
    { ...options, applicationName: 'platform-pipeline-queue', maintenanceIntervalSeconds: 2 },
  );
}

/** A UUID named after the window's attempt: the same in every process. */
export function windowMessageId(w: PipelineWindow): string {
  return messageIdOf(`pipeline-window:${w.pipelineId}:${w.dataStart.toISOString()}:${w.dataEnd.toISOString()}:${w.attempt}`);
}

/** Puts due windows on the queue (the elected scheduler of the scale-out `serve`). */
export class BossWindowDispatch implements WindowDispatch {
  constructor(
    private readonly boss: PgBoss,
    /** Seconds a taken message may run before pg-boss gives it to another worker. */
    private readonly expireInSeconds: number,
  ) {}

  async send(w: PipelineWindow): Promise<boolean> {
    const sent = await this.boss.send(windowQueueName, toMessage(w), {
      id: windowMessageId(w),
      singletonKey: `${w.pipelineId}:${w.dataEnd.toISOString()}:${w.attempt}`,
      expireInSeconds: this.expireInSeconds,
    });
    return sent !== null;
  }
}
