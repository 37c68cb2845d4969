// The training queue of the scale-out mode: a pg-boss queue (pg-boss 10, pinned: the line that runs on
// Node 20) in the cloud's PostgreSQL. `serve` processes put each submitted job's id on it
// (BossTrainingDispatch); `platform-cloud worker` processes take them (worker.ts).
//
// A message only carries a job to a worker: the worker claims the job row (JobStore.claim) and
// completes the message at once, and from then on the row and a PostgreSQL advisory lock the worker
// holds for the job say who runs it. A message whose worker died before claiming is given to another
// after its expiration (expireInSeconds, short: the claim follows the fetch within milliseconds); a
// job whose worker died while running it is put back by the reaper (worker.ts) as a takeover message.
//
// Fairness across organizations (issue 27): a job's priority is minus the number of jobs its
// organization had pending when it was submitted, and pg-boss hands out the highest priority first
// (then the oldest): every organization's first waiting job goes before any organization's second,
// so a flooding organization's line never keeps another's job waiting behind more than one job of each
// organization. The per-organization limit of running jobs is checked in the claim, across workers.
import type PgBoss from 'pg-boss';
import { messageIdOf, startBoss } from '../store/pg-boss-queue.js';
import type { TrainingDispatch } from './ml-training.js';
import type { TrainingJob } from './training-job.js';

export const trainingQueueName = 'platform-training';

/** What a message carries: the job, and whether it takes over the job of a worker that died. */
export interface TrainingMessage {
  jobId: string;
  takeOver?: boolean;
}

/** Seconds a fetched message may stay unclaimed before pg-boss gives it to another worker. */
export const claimExpirySeconds = 60;

export interface BossOptions {
  /** Workers run pg-boss's maintenance (expiring unclaimed messages); serve processes need not. */
  supervise: boolean;
  /** Connections of pg-boss's own pool. Default 2. */
  max?: number;
  onError?: (err: Error) => void;
}

/** Starts pg-boss on the database and makes the training queue. */
export function openBoss(url: string, options: BossOptions): Promise<PgBoss> {
  return startBoss(
    url,
    { name: trainingQueueName, expireInSeconds: claimExpirySeconds, retryLimit: 1000, retryDelay: 2 },
    { ...options, applicationName: 'platform-training-queue', maintenanceIntervalSeconds: 5 },
  );
}

/** A UUID that names one message for good: sending it twice stores it once. */
export const messageId = messageIdOf;

/** Puts submitted jobs on the queue (the scale-out `serve`). */
export class BossTrainingDispatch implements TrainingDispatch {
  constructor(private readonly boss: PgBoss) {}

  async submit(job: TrainingJob, placeInLine: number): Promise<void> {
    const message: TrainingMessage = { jobId: job.id };
    await this.boss.send(trainingQueueName, message, { id: messageId(`submit:${job.id}`), priority: -placeInLine });
  }
}
