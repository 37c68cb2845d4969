// Starts pg-boss (pg-boss 10) and makes a queue that several processes may be making at the same moment,
// as the scale-out `serve` and `worker` processes do at start (the training queue,
// cloud/mltraining/worker-queue.ts; the data pipeline queue, cloud/query/pipelines/window-queue.ts), and
// names messages for good (messageIdOf). pg-boss's create_queue inserts the
// queue's row and then adds a foreign key that references the queue table, which locks that table:
// two processes creating the same queue at once deadlock (one waits for the other's row, the other for
// the table), and PostgreSQL fails one of them with 40P01. The queue then exists, or the failed one
// simply tries again; two `serve` processes started together stopped at start on that before.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import PgBoss from 'pg-boss';

/** SQLSTATEs after which creating the queue is tried again: deadlock, serialization failure, unique violation. */
const RETRYABLE = new Set(['40P01', '40001', '23505']);

export async function ensureBossQueue(boss: PgBoss, queue: PgBoss.Queue, attempts = 10): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (await boss.getQueue(queue.name)) return;
    try {
      await boss.createQueue(queue.name, queue);
      return;
    } catch (err) {
      if (await boss.getQueue(queue.name)) return; // another process made it
      if (!RETRYABLE.has((err as { code?: string }).code ?? '') || attempt >= attempts) throw err;
      await sleep(20 + Math.random() * 200);
    }
  }
}

export interface StartBossOptions {
  /** The connections' application_name, which names the queue in pg_stat_activity. */
  applicationName: string;
  /** Workers run pg-boss's maintenance (expiring the messages of dead workers); serve processes need not. */
  supervise: boolean;
  /** Seconds between maintenance passes: how late an expired message goes to another worker. */
  maintenanceIntervalSeconds: number;
  /** Connections of pg-boss's own pool. Default 2. */
  max?: number;
  onError?: (err: Error) => void;
}

/** Starts pg-boss on the database (its schema `pgboss`, made once by whichever process comes first) and makes `queue`. */
export async function startBoss(url: string, queue: PgBoss.Queue, options: StartBossOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    max: options.max ?? 2,
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds,
    application_name: options.applicationName,
  });
  boss.on('error', (err: Error) => options.onError?.(err));
  await boss.start();
  await ensureBossQueue(boss, queue);
  return boss;
}

/**
 * A UUID named after `text`, the same in every process: pg-boss stores a message whose id it holds
 * already as nothing (ON CONFLICT DO NOTHING), so a message sent twice under one name is stored once.
 */
export function messageIdOf(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
