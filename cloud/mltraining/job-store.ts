// Jobs and their logs in the cloud's tables (training-tables.ts), on either backend: one row per job
// (the job as JSON plus the columns lookups filter by) and one row per log entry. Several processes
// may touch one job in the scale-out mode (an API process cancels it, a worker runs it), so every
// change that depends on the row's state is made in one transaction that reads it first.
// Writes of one job from this process are chained so that an older snapshot never replaces a newer one.
import { alreadyExists, resourceExhausted } from '../../core/serving/status-error.js';
import type { SqlSession, TabularRow, TabularStore } from '../store/tabular.js';
import { ensureTrainingTables } from './training-tables.js';
import { isFinished, type TrainingJob, type TrainingLogEntry, type TrainingStatus } from './training-job.js';

/** A chatty custom script must not fill the database: past this many lines a job's log keeps only a notice. */
export const maxLogEntriesPerJob = 20_000;
const maxMessageLength = 4_000;
export const logPageSize = 500;

/** What a run's write found: the row's status, or that the job is gone or owned by another run. */
export type RunWrite = { status: TrainingStatus } | { gone: true } | { lost: true };

function jobOf(row: TabularRow): TrainingJob {
  const job = JSON.parse(String(row.job)) as TrainingJob;
  job.status = String(row.status) as TrainingStatus;
  return job;
}

async function writeRow(tx: SqlSession, job: TrainingJob): Promise<number> {
  return tx.execute('UPDATE training_jobs SET status = ?, job = ? WHERE id = ?', [job.status, JSON.stringify(job), job.id]);
}

/** A new job's row: no run claims it yet (an empty run token and runner). */
export async function insertJobRow(tx: SqlSession, job: TrainingJob): Promise<void> {
  await tx.execute(
    'INSERT INTO training_jobs (id, organization_id, model_name, model_version, status, created_on, run_token, queue_job_id, job) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [job.id, job.organizationId, job.modelName, job.modelVersion, job.status, new Date(job.createdOn), '', '', JSON.stringify(job)],
  );
}

export class JobStore {
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Next log position per job this process appends to (read from the table on the first append). */
  private readonly positions = new Map<string, Promise<number>>();
  private readonly logChains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: TabularStore,
    private readonly maxLogEntries = maxLogEntriesPerJob,
  ) {}

  init(): Promise<void> {
    return ensureTrainingTables(this.store);
  }

  /**
   * Inserts a new PENDING job, refused (ALREADY_EXISTS) when its model version is taken by a job or a
   * stored model, or (RESOURCE_EXHAUSTED) when its organization already has maxPending pending jobs.
   * Returns how many jobs of the organization were pending before it (its place in the line).
   */
  async create(job: TrainingJob, maxPending: number): Promise<number> {
    return this.store.transact(async (tx) => {
      const key = [job.organizationId, job.modelName, job.modelVersion];
      const used =
        (await tx.query('SELECT 1 FROM training_jobs WHERE organization_id = ? AND model_name = ? AND model_version = ? LIMIT 1', key)).length > 0 ||
        (await tx.query('SELECT 1 FROM training_models WHERE organization_id = ? AND model_name = ? AND model_version = ? LIMIT 1', key)).length > 0;
      if (used) throw alreadyExists(`model_version '${job.modelVersion}' is already used for model ${job.modelName} in organization ${job.organizationId}`);
      const pendingRows = await tx.query("SELECT count(*) AS n FROM training_jobs WHERE organization_id = ? AND status = 'PENDING'", [job.organizationId]);
      const pending = Number(pendingRows[0].n);
      if (pending >= maxPending) {
        throw resourceExhausted(
          `organization ${job.organizationId} already has ${pending} pending training jobs, the limit (PLATFORM_TRAINING_MAX_PENDING_PER_ORG); wait for some to start or cancel them`,
        );
      }
      await insertJobRow(tx, job);
      return pending;
    });
  }

  async get(id: string): Promise<TrainingJob | undefined> {
    const rows = await this.store.query('SELECT status, job FROM training_jobs WHERE id = ?', [id]);
    return rows.length ? jobOf(rows[0]) : undefined;
  }

  /** The organization's jobs (with that status, if given), oldest first. */
  async list(organizationId: string, status?: TrainingStatus): Promise<TrainingJob[]> {
    const rows = status
      ? await this.store.query('SELECT status, job FROM training_jobs WHERE organization_id = ? AND status = ? ORDER BY created_on, id', [
          organizationId,
          status,
        ])
      : await this.store.query('SELECT status, job FROM training_jobs WHERE organization_id = ? ORDER BY created_on, id', [organizationId]);
    return rows.map(jobOf);
  }

  /** Every job in one of the statuses, oldest first (restart recovery, the queue's refill). */
  async withStatus(statuses: readonly TrainingStatus[]): Promise<TrainingJob[]> {
    const rows = await this.store.query('SELECT status, job FROM training_jobs WHERE status IN (SELECT unnest(CAST(? AS VARCHAR[]))) ORDER BY created_on, id', [
      statuses,
    ]);
    return rows.map(jobOf);
  }

  /** Jobs per status, for /metrics. */
  async counts(): Promise<Map<string, number>> {
    const rows = await this.store.query('SELECT status, count(*) AS n FROM training_jobs GROUP BY status');
    return new Map(rows.map((r) => [String(r.status), Number(r.n)]));
  }

  /** Saves the job as it is (written after earlier saves of the same job from this process). */
  save(job: TrainingJob): Promise<void> {
    const snapshot = structuredClone(job);
    return this.enqueue(job.id, async () => {
      await writeRow(this.store, snapshot);
    });
  }

  /**
   * Makes `token` the run that owns the job, if it may run: PENDING, or (takeOver) IN_PROGRESS or
   * CANCELING left by a run whose process died; a PENDING job becomes IN_PROGRESS here. With
   * perOrganization, 'busy' when that many jobs of its organization run already (on any process).
   * Returns the job as it was, or undefined when it may not run.
   *
   * Each claim counts one take in the row, in the same transaction (two workers racing for a job meet
   * in it: SERIALIZABLE on PostgreSQL, one writer on DuckDB). With maxTakes, a takeover of an
   * IN_PROGRESS job that maxTakes runs started and did not hand back (handBack) ends it FAILED here
   * instead, once, and returns 'taken-too-often': each of those runs ended with its worker stopped
   * (kill -9, the OOM killer, a machine fault), and a job that stops every worker it reaches must not go
   * round the workers forever. A CANCELING job is taken over all the same: its run ends it CANCELED
   * before starting anything.
   */
  claim(
    id: string,
    token: string,
    queueJobId: string,
    takeOver: boolean,
    perOrganization?: number,
    maxTakes?: number,
  ): Promise<TrainingJob | 'busy' | 'taken-too-often' | undefined> {
    return this.store.transact(async (tx) => {
      const rows = await tx.query('SELECT status, job, coalesce(takes, 0) AS takes FROM training_jobs WHERE id = ?', [id]);
      if (!rows.length) return undefined;
      const job = jobOf(rows[0]);
      const takes = Number(rows[0].takes);
      const may = job.status === 'PENDING' || (takeOver && (job.status === 'IN_PROGRESS' || job.status === 'CANCELING'));
      if (!may) return undefined;
      if (takeOver && job.status === 'IN_PROGRESS' && maxTakes !== undefined && takes >= maxTakes) {
        const now = new Date().toISOString();
        const message = `the job's worker stopped ${takes} times while running it (PLATFORM_TRAINING_JOB_MAX_TAKES=${maxTakes}); it is not started again`;
        Object.assign(job, { status: 'FAILED', errorStatus: { code: 13 /* INTERNAL */, message }, lastModified: now, trainingEnded: now, pid: undefined });
        // A new token: a run still alive behind a broken lock session (its writes check the token) stops.
        await tx.execute('UPDATE training_jobs SET run_token = ?, queue_job_id = ? WHERE id = ?', [token, queueJobId, id]);
        await writeRow(tx, job);
        return 'taken-too-often';
      }
      if (perOrganization !== undefined) {
        const running = await tx.query(
          "SELECT count(*) AS n FROM training_jobs WHERE organization_id = ? AND status IN ('IN_PROGRESS', 'CANCELING') AND id <> ?",
          [job.organizationId, id],
        );
        if (Number(running[0].n) >= perOrganization) return 'busy';
      }
      const status = job.status === 'PENDING' ? 'IN_PROGRESS' : job.status;
      await tx.execute('UPDATE training_jobs SET run_token = ?, queue_job_id = ?, status = ?, takes = ? WHERE id = ?', [
        token,
        queueJobId,
        status,
        takes + 1,
        id,
      ]);
      return job;
    });
  }

  /**
   * A run handed back by a worker that is stopping (SIGTERM): its take does not count, since the job
   * did not stop the worker. Only while `token` still owns the job.
   */
  async handBack(id: string, token: string): Promise<void> {
    await this.store.execute('UPDATE training_jobs SET takes = takes - 1 WHERE id = ? AND run_token = ? AND takes > 0', [id, token]);
  }

  /** How many runs of the job a worker started and did not hand back (JobStore.claim). */
  async takes(id: string): Promise<number | undefined> {
    const rows = await this.store.query('SELECT coalesce(takes, 0) AS takes FROM training_jobs WHERE id = ?', [id]);
    return rows.length ? Number(rows[0].takes) : undefined;
  }

  /** Jobs that a run owns (IN_PROGRESS or CANCELING) and that came through the queue: the reaper's candidates. */
  async owned(): Promise<{ id: string; runToken: string }[]> {
    const rows = await this.store.query("SELECT id, run_token FROM training_jobs WHERE status IN ('IN_PROGRESS', 'CANCELING') AND queue_job_id <> ''");
    return rows.map((r) => ({ id: String(r.id), runToken: String(r.run_token) }));
  }

  /**
   * A run's write: only while `token` owns the job. A CANCELING status set by a cancel request stays
   * until the run writes a finished status. `also` runs in the same transaction (the stored model of a
   * COMPLETED job), so the two commit together or not at all.
   */
  saveRun(job: TrainingJob, token: string, also?: (tx: SqlSession) => Promise<void>): Promise<RunWrite> {
    const snapshot = structuredClone(job);
    let result: RunWrite = { gone: true };
    return this.enqueue(job.id, async () => {
      result = await this.store.transact(async (tx): Promise<RunWrite> => {
        const rows = await tx.query('SELECT status, run_token FROM training_jobs WHERE id = ?', [snapshot.id]);
        if (!rows.length) return { gone: true };
        if (String(rows[0].run_token) !== token) return { lost: true };
        const stored = String(rows[0].status) as TrainingStatus;
        const written = { ...snapshot };
        if (stored === 'CANCELING' && !isFinished(written.status)) written.status = 'CANCELING';
        if (isFinished(stored)) return { status: stored };
        await also?.(tx);
        await writeRow(tx, written);
        return { status: written.status };
      });
    }).then(() => result);
  }

  /**
   * A cancel request: PENDING becomes CANCELED at once, IN_PROGRESS becomes CANCELING (the run that
   * owns it stops). Returns the job before and after, or undefined for an unknown id.
   */
  cancel(id: string, now: string): Promise<{ before: TrainingStatus; job: TrainingJob } | undefined> {
    return this.store.transact(async (tx) => {
      const rows = await tx.query('SELECT status, job FROM training_jobs WHERE id = ?', [id]);
      if (!rows.length) return undefined;
      const job = jobOf(rows[0]);
      const before = job.status;
      if (before === 'PENDING') {
        Object.assign(job, {
          status: 'CANCELED',
          errorStatus: { code: 1, message: 'canceled by request before it started' },
          lastModified: now,
          trainingEnded: now,
        });
      } else if (before === 'IN_PROGRESS') Object.assign(job, { status: 'CANCELING', lastModified: now });
      else return { before, job };
      await writeRow(tx, job);
      return { before, job };
    });
  }

  async remove(id: string): Promise<void> {
    await this.closeLog(id);
    await this.enqueue(id, async () => {
      await this.store.transact(async (tx) => {
        await tx.execute('DELETE FROM training_job_logs WHERE job_id = ?', [id]);
        await tx.execute('DELETE FROM training_jobs WHERE id = ?', [id]);
      });
    });
    this.chains.delete(id);
  }

  private enqueue(id: string, write: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(write);
    this.chains.set(
      id,
      next.catch(() => undefined),
    );
    return next;
  }

  /** Appends a log entry (written in order). */
  appendLog(id: string, entry: TrainingLogEntry): Promise<void> {
    const line = { ...entry, message: entry.message.slice(0, maxMessageLength) };
    const write = (this.logChains.get(id) ?? Promise.resolve()).then(async () => {
      let position = this.positions.get(id);
      if (!position) {
        position = this.store
          .query('SELECT coalesce(max(position) + 1, 0) AS next FROM training_job_logs WHERE job_id = ?', [id])
          .then((rows) => Number(rows[0].next));
        this.positions.set(id, position);
      }
      const at = await position.catch(() => {
        this.positions.delete(id);
        throw new Error('the log position could not be read');
      });
      if (at > this.maxLogEntries) return;
      const shown = at === this.maxLogEntries ? { level: 'warn', time: entry.time, message: `log truncated after ${this.maxLogEntries} entries` } : line;
      this.positions.set(id, Promise.resolve(at + 1));
      try {
        await this.store.execute('INSERT INTO training_job_logs VALUES (?, ?, ?, ?, ?)', [id, at, shown.level, shown.time, shown.message]);
      } catch (err) {
        this.positions.delete(id); // another process appended (a unique key on PostgreSQL): read it again next time
        throw err;
      }
    });
    this.logChains.set(
      id,
      write.catch(() => undefined),
    );
    return write;
  }

  /** Waits for the job's log writes and forgets its position. */
  async closeLog(id: string): Promise<void> {
    await this.logChains.get(id);
    this.logChains.delete(id);
    this.positions.delete(id);
  }

  /** Entries from `start`, at most `limit`, and how many the log holds now. */
  async readLog(id: string, start = 0, limit = Number.MAX_SAFE_INTEGER): Promise<{ entries: TrainingLogEntry[]; total: number }> {
    const rows = await this.store.query('SELECT level, time, message FROM training_job_logs WHERE job_id = ? AND position >= ? ORDER BY position LIMIT ?', [
      id,
      start,
      Math.min(limit, 2 ** 31 - 1),
    ]);
    const total = Number((await this.store.query('SELECT count(*) AS n FROM training_job_logs WHERE job_id = ?', [id]))[0].n);
    return {
      entries: rows.map((r) => ({ level: r.level as TrainingLogEntry['level'], time: String(r.time), message: String(r.message) })),
      total,
    };
  }

  /** Waits for every pending write. */
  async flush(): Promise<void> {
    await Promise.all([...this.chains.values()]);
    await Promise.all([...this.logChains.keys()].map((id) => this.closeLog(id)));
  }
}
