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
import { createHash } from 'node:crypto';
import PgBoss from 'pg-boss';
import { ensureBossQueue } from '../store/pg-boss-queue.js';
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

/** Starts pg-boss on the database (its schema `pgboss`, made once by whichever process comes first) and makes the queue. */
export async function openBoss(url: string, options: BossOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    max: options.max ?? 2,
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: 5,
    application_name: 'platform-training-queue',
  });
  boss.on('error', (err: Error) => options.onError?.(err));
  await boss.start();
  // Several processes may make it at the same moment (ensureBossQueue says what then).
  await ensureBossQueue(boss, { name: trainingQueueName, expireInSeconds: claimExpirySeconds, retryLimit: 1000, retryDelay: 2 });
  return boss;
}

/** A UUID that names one message for good: sending it twice stores it once (pg-boss: ON CONFLICT DO NOTHING). */
export function messageId(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Puts submitted jobs on the queue (the scale-out `serve`). */
export class BossTrainingDispatch implements TrainingDispatch {
  constructor(private readonly boss: PgBoss) {}

  async submit(job: TrainingJob, placeInLine: number): Promise<void> {
    const message: TrainingMessage = { jobId: job.id };
    await this.boss.send(trainingQueueName, message, { id: messageId(`submit:${job.id}`), priority: -placeInLine });
  }
}
