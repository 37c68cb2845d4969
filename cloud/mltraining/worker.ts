// `platform-cloud worker`: runs the training jobs of a scale-out cloud (issue 33), taken from the pg-boss
// queue in the cloud's PostgreSQL (worker-queue.ts), with the same trainer, sandbox and limits as the
// embedded default (training-run.ts, trainer-sandbox.ts). Any number of workers share one database and
// one S3 bucket; each runs up to PLATFORM_TRAINING_CONCURRENCY jobs at once.
//
// Exactly once: a worker takes a PostgreSQL session advisory lock named after the job before it claims
// the job's row, and holds it for the whole run. PostgreSQL releases a session's locks when the session
// ends, and a process killed with kill -9 ends its sessions at once. The reaper, run by one worker at a
// time (LeaderElection), looks every second for jobs that a run owns (IN_PROGRESS, CANCELING) whose lock
// is free: their worker died, and the reaper puts a takeover message on the queue (named after the job
// and its run token, so that one death gives one message). The worker that takes it runs the job again
// from the start under a new run token; the dead run's token no longer writes anything, and the model's
// row commits with the COMPLETED status (JobStore.saveRun), so a job completes once with one model.
//
// A job that stops every worker that runs it (a script that brings the OOM killer, a machine fault) would
// go round the workers forever: each death makes a new takeover message, so pg-boss's retry limit never
// applies. The claim counts the takes in the job's row; a take counts when its worker stops while
// running the job (kill -9, crash, OOM), not when a stopping worker hands the job back (SIGTERM:
// TrainingRun releases it and JobStore.handBack takes the count back). A takeover that finds
// PLATFORM_TRAINING_JOB_MAX_TAKES counted takes ends the job FAILED with the reason, once, and starts nothing.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { LeaderElection } from '../store/pg-leader.js';
import type { MLTraining } from './ml-training.js';
import { isFinished } from './training-job.js';
import { messageId, trainingQueueName, type TrainingMessage } from './worker-queue.js';

export interface TrainingWorkerOptions {
  /** The cloud's PostgreSQL (locks and the reaper's election). */
  url: string;
  training: MLTraining;
  boss: PgBoss;
  /** Jobs run here at once. */
  slots: number;
  /** Jobs of one organization running at once, across all workers. */
  perOrganization: number;
  /** How this worker names itself in job logs. Default `worker <host>:<pid>`. */
  name?: string;
  /** How often an idle slot asks the queue and the reaper looks. Default 500 ms. */
  pollMs?: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

const lockSql = (fn: string) => `SELECT ${fn}(hashtextextended($1, 0)) AS ok`;

export class TrainingWorker {
  /** The session holding the locks of the jobs run here, and the reaper's own (a session's locks are re-entrant). */
  private readonly sessions: { locks?: Promise<pg.Client>; reaper?: Promise<pg.Client> } = {};
  private election?: LeaderElection;
  private reaper?: Promise<void>;
  private readonly loops: Promise<void>[] = [];
  private stopped = false;
  readonly name: string;
  private readonly pollMs: number;

  constructor(private readonly options: TrainingWorkerOptions) {
    this.name = options.name ?? `worker ${hostname()}:${process.pid}`;
    this.pollMs = options.pollMs ?? 500;
  }

  start(): void {
    this.election = LeaderElection.start({
      url: this.options.url,
      name: 'platform-training-reaper',
      onLeader: () => this.options.logger?.info({ worker: this.name }, 'this worker now reaps the jobs of dead workers'),
      onError: (err) => this.options.logger?.warn({ err: err.message }, 'training reaper election: database unreachable'),
    });
    this.reaper = this.reapLoop();
    for (let i = 0; i < this.options.slots; i++) this.loops.push(this.slotLoop());
  }

  /** Stops taking jobs and hands the running ones back (another worker runs them again), then leaves. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.options.training.stop('release');
    await Promise.allSettled([...this.loops, this.reaper]);
    await this.election?.stop();
    for (const which of ['locks', 'reaper'] as const) {
      const session = this.sessions[which];
      this.sessions[which] = undefined;
      await session?.then((c) => c.end()).catch(() => undefined);
    }
  }

  /** A session of this worker's; made again if it broke (the locks it held are gone then). */
  private session(which: 'locks' | 'reaper'): Promise<pg.Client> {
    this.sessions[which] ??= (async () => {
      const client = new pg.Client({ connectionString: this.options.url, keepAlive: true, application_name: `platform-training-${which}` });
      client.on('error', () => {
        // Every lock of the session is gone: the reaper may give these jobs to another worker, and the
        // runs here stop at their next write (their run token is replaced).
        this.sessions[which] = undefined;
        void client.end().catch(() => undefined);
      });
      await client.connect();
      return client;
    })().catch((err: unknown) => {
      this.sessions[which] = undefined;
      throw err;
    });
    return this.sessions[which];
  }

  private async tryLock(key: string, which: 'locks' | 'reaper' = 'locks'): Promise<boolean> {
    const { rows } = await (await this.session(which)).query<{ ok: boolean }>(lockSql('pg_try_advisory_lock'), [key]);
    return rows[0].ok;
  }

  private async unlock(key: string, which: 'locks' | 'reaper' = 'locks'): Promise<void> {
    await (await this.session(which)).query(lockSql('pg_advisory_unlock'), [key]).catch(() => undefined);
  }

  private async slotLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        const [message] = await this.options.boss.fetch<TrainingMessage>(trainingQueueName, { batchSize: 1, includeMetadata: true });
        if (!message) await sleep(this.pollMs);
        else await this.handle(message);
      } catch (err) {
        this.options.logger?.error({ err: (err as Error).message }, 'training worker: a queue message could not be handled');
        await sleep(this.pollMs);
      }
    }
  }

  private async handle(message: PgBoss.JobWithMetadata<TrainingMessage>): Promise<void> {
    const { boss, training } = this.options;
    const { jobId, takeOver = false } = message.data;
    const key = `training:${jobId}`;
    if (this.stopped) {
      await boss.fail(trainingQueueName, message.id, { reason: 'the worker is stopping' });
      return;
    }
    if (!(await this.tryLock(key))) {
      // Another live process runs it. Dropped when the job has ended; else tried again later (the lock
      // may have been the reaper's brief look).
      const job = await training.jobs.get(jobId);
      if (!job || isFinished(job.status)) await boss.complete(trainingQueueName, message.id);
      else await boss.fail(trainingQueueName, message.id, { reason: 'another process holds the job' });
      return;
    }
    try {
      const outcome = await training.runClaimed(jobId, message.id, takeOver, {
        perOrganization: this.options.perOrganization,
        runner: this.name,
        // Claimed: the message is done; from here the row and the lock say who runs the job.
        onClaimed: async () => {
          await boss.complete(trainingQueueName, message.id);
          // An operator reads which worker runs what from its own log, not only from the job's.
          this.options.logger?.info({ jobId }, 'training job started on this worker');
        },
      });
      if (outcome === 'ran') {
        const status = (await training.jobs.get(jobId).catch(() => undefined))?.status;
        this.options.logger?.info({ jobId, status }, 'training job left this worker');
      }
      if (outcome === 'taken-too-often') {
        // The claim ended the job FAILED (once: a second claim finds it finished); its log says why.
        const reason = (await training.jobs.get(jobId))?.errorStatus?.message ?? '';
        await training.jobs.appendLog(jobId, { level: 'error', time: new Date().toISOString(), message: `training failed: ${reason}` });
        await training.jobs.closeLog(jobId);
        this.options.logger?.warn({ jobId }, 'training job FAILED, not started: its workers stopped while running it PLATFORM_TRAINING_JOB_MAX_TAKES times');
        await boss.complete(trainingQueueName, message.id);
      }
      if (outcome === 'skipped') await boss.complete(trainingQueueName, message.id);
      else if (outcome === 'busy') {
        // Its organization runs its share already: back in the line at the same priority, a little later.
        await boss.send(trainingQueueName, message.data, { priority: message.priority, startAfter: 2 });
        await boss.complete(trainingQueueName, message.id);
      }
    } finally {
      await this.unlock(key);
    }
  }

  private async reapLoop(): Promise<void> {
    while (!this.stopped) {
      if (this.election?.isLeader) {
        await this.reap().catch((err: unknown) => this.options.logger?.warn({ err: (err as Error).message }, 'training reaper pass failed'));
      }
      await sleep(this.pollMs);
    }
  }

  /** Puts back the jobs whose worker died: owned by a run, with no session holding their lock. */
  private async reap(): Promise<void> {
    for (const { id, runToken } of await this.options.training.jobs.owned()) {
      if (this.stopped) return;
      const key = `training:${id}`;
      if (!(await this.tryLock(key, 'reaper'))) continue; // its worker lives (this one included)
      await this.unlock(key, 'reaper');
      const sent = await this.options.boss.send(trainingQueueName, { jobId: id, takeOver: true } satisfies TrainingMessage, {
        id: messageId(`takeover:${id}:${runToken}`),
        priority: 1,
      });
      if (sent) this.options.logger?.warn({ jobId: id }, 'the worker running a training job died; the job goes to another worker');
    }
  }
}
