// Makes a pg-boss queue (pg-boss 10) that several processes may be making at the same moment, as the
// scale-out `serve` and `worker` processes do at start (the training queue, cloud/mltraining/worker-queue.ts;
// the data pipeline queue, cloud/query/pipelines/window-queue.ts). pg-boss's create_queue inserts the
// queue's row and then adds a foreign key that references the queue table, which locks that table:
// two processes creating the same queue at once deadlock (one waits for the other's row, the other for
// the table), and PostgreSQL fails one of them with 40P01. The queue then exists, or the failed one
// simply tries again; two `serve` processes started together stopped at start on that before.
import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';

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
