// The ML training service's core, independent of gRPC: submit, inspect, list, cancel and delete jobs,
// run them, and recover them after a restart. Jobs, logs, models and scripts live in the cloud's tables
// and blob store (job-store.ts, model-artefacts.ts, script-registry.ts), so any process can answer for
// any job. Where jobs run: on the embedded default in this process, through the fair TrainingQueue; in
// the scale-out mode a `dispatch` (worker-queue.ts) hands them to the pg-boss queue that
// `platform-cloud worker` processes take them from (worker.ts), and they run there through runClaimed().
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { failedPrecondition, invalidArgument, notFound } from '../../core/serving/status-error.js';
import type { TrainingDataSource } from './data-source.js';
import { JobStore, logPageSize } from './job-store.js';
import { importLegacyFiles } from './legacy-import.js';
import { ModelArtefactStore } from './model-artefacts.js';
import { endInterrupted } from './interrupted-jobs.js';
import { defaultPython } from './python-command.js';
import { TrainingScriptRegistry, type RegistryLimits } from './script-registry.js';
import { checkBuiltinArguments, checkCustomArguments } from './training-arguments.js';
import { checkBuiltinRequest, checkCommonFields, checkOrganizationId, type SubmitCustomTrainingJob, type SubmitTrainingJob } from './training-requests.js';

export { checkOrganizationId, type SubmitCustomTrainingJob, type SubmitTrainingJob } from './training-requests.js';
import { TrainingQueue } from './training-queue.js';
import { Store } from '../store/store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { TrainingRun, type TrainingRunContext } from './training-run.js';
import type { ProcessLimits } from './trainer-process.js';
import type { DiskLimits } from './job-disk-watch.js';
import { BubblewrapConfinement, NoConfinement, type SandboxSettings } from './trainer-sandbox.js';
import { isFinished, type TrainingJob, type TrainingLogEntry, type TrainingStatus } from './training-job.js';
import { inSpan } from '../../core/serving/telemetry/tracing.js';

/** Hands a submitted job to the processes that run it (the scale-out mode's pg-boss queue). */
export interface TrainingDispatch {
  /** placeInLine: how many jobs of its organization were pending before it (the queue's fairness). */
  submit(job: TrainingJob, placeInLine: number): Promise<void>;
}

export interface MLTrainingOptions {
  /** Folder for work files (the cloud uses <data-dir>/mltraining); also the DuckDB store's when `store` is absent. */
  root: string;
  /** The cloud's tables and blobs. Absent: an embedded DuckDB store of its own under <root>/store (tests, benchmarks). */
  store?: StoreWithBlobs;
  /**
   * Where submitted jobs go: absent, they run in this process (the fair TrainingQueue; restart recovery
   * at start); given, to the dispatch, and this process runs only what runClaimed() is handed.
   */
  dispatch?: TrainingDispatch;
  /**
   * The scale-out `serve`: no job runs in this process, so it does not probe bubblewrap here and does
   * not refuse submits for the lack of it; the workers, which run the jobs, do (a job that reaches a
   * worker without confinement fails FAILED_PRECONDITION, as on the embedded default).
   */
  runsNoJobs?: boolean;
  dataSource: TrainingDataSource;
  /** Jobs that train at the same time, in total. Default 2. */
  concurrency?: number;
  /** Jobs of one organization that train at the same time. Default 1 (training-queue.ts). */
  perOrganizationConcurrency?: number;
  python?: string;
  builtinLimits?: Partial<ProcessLimits>;
  customLimits?: Partial<ProcessLimits>;
  builtinDefaults?: Record<string, string>;
  /** PyTorch threads per built-in job. Default: the CPU count divided by the concurrency (at least 1). */
  trainerThreads?: number;
  killGraceMs?: number;
  /** Bounds of the training-script registry (script-registry.ts). */
  registryLimits?: Partial<RegistryLimits>;
  /** What one job folder may hold in total. Default 20 GiB, 200,000 entries, measured every 2 s. */
  disk?: Partial<DiskLimits>;
  /** PENDING jobs one organization may have. Default 100. */
  maxPendingPerOrg?: number;
  /** Scale-out: takes of a job that may end with the worker stopped (JobStore.claim). Default 3 (PLATFORM_TRAINING_JOB_MAX_TAKES). */
  maxJobTakes?: number;
  /** Trainer confinement with bubblewrap (trainer-sandbox.ts); every trainer runs in it. */
  sandbox?: SandboxSettings;
  /**
   * When bubblewrap cannot be used: run built-in trainers unconfined instead of refusing them
   * (PLATFORM_TRAINING_UNCONFINED=1). Custom scripts are refused all the same.
   */
  allowUnconfinedBuiltins?: boolean;
  logger?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

/** Two, so that one organization's long job (per-organization limit 1) does not stop every other's. */
export const defaultConcurrency = 2;

export class MLTraining {
  readonly registry: TrainingScriptRegistry;
  readonly artefacts: ModelArtefactStore;
  readonly jobs: JobStore;
  private readonly runs = new Map<string, TrainingRun>();
  private readonly queue: TrainingQueue;
  private readonly ctx: TrainingRunContext;
  private readonly bubblewrap: BubblewrapConfinement;
  private readonly tables: StoreWithBlobs | undefined;
  private readonly store: StoreWithBlobs;
  private ownStore: Store | undefined;
  private counts = new Map<string, number>();
  private watch?: NodeJS.Timeout;
  private started = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly options: MLTrainingOptions) {
    this.tables = options.store;
    // Without options.store, the store is opened only in start(): the modules, made now, reach whichever
    // store is open through this forwarding object.
    const store = new Proxy({} as StoreWithBlobs, {
      get: (_target, key) => {
        const target = this.tables ?? this.ownStore;
        if (!target) throw new Error('the training service is not started');
        const value = (target as unknown as Record<string | symbol, unknown>)[key];
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    this.store = store;
    this.jobs = new JobStore(store);
    this.registry = new TrainingScriptRegistry(store, options.registryLimits);
    this.artefacts = new ModelArtefactStore(store);
    const concurrency = options.concurrency ?? defaultConcurrency;
    this.queue = new TrainingQueue({ concurrency, perOrganization: options.perOrganizationConcurrency ?? 1 }, (id) =>
      this.runClaimed(id, '', false).then(() => undefined),
    );
    this.ctx = {
      workRoot: join(options.root, 'work'),
      store: this.jobs,
      dataSource: options.dataSource,
      registry: this.registry,
      artefacts: this.artefacts,
      python: options.python ?? defaultPython(),
      builtinLimits: { wallSeconds: 6 * 3600, memoryBytes: 16 * 2 ** 30, ...options.builtinLimits },
      customLimits: { wallSeconds: 2 * 3600, memoryBytes: 8 * 2 ** 30, ...options.customLimits },
      builtinDefaults: options.builtinDefaults ?? {},
      // One share of the cores per concurrent job: oversubscribed OpenMP threads spin and slow training
      // down several times over.
      trainerThreads: options.trainerThreads ?? Math.max(1, Math.floor(availableParallelism() / concurrency)),
      killGraceMs: options.killGraceMs ?? 5_000,
      confinement: { unconfinedReason: 'the training service is starting; try again' },
      disk: { maxBytes: 20 * 2 ** 30, maxEntries: 200_000, ...options.disk },
    };
    this.bubblewrap = new BubblewrapConfinement(options.sandbox ?? {}, this.ctx.workRoot);
  }

  /** Checks that trainers can be confined here, and decides what runs when they cannot. */
  private async chooseConfinement(): Promise<void> {
    const problem = await this.bubblewrap.probe(this.ctx.python);
    if (!problem) {
      this.ctx.confinement = { custom: this.bubblewrap, builtin: this.bubblewrap, unconfinedReason: '' };
      return;
    }
    const builtin = this.options.allowUnconfinedBuiltins ? new NoConfinement() : undefined;
    this.ctx.confinement = {
      builtin,
      unconfinedReason:
        `training needs confinement (bubblewrap) and it is unavailable here: ${problem}. Training scripts are never run unconfined` +
        (builtin ? '' : '; built-in training runs unconfined only when the operator sets PLATFORM_TRAINING_UNCONFINED=1'),
    };
    this.options.logger?.warn({ problem, builtinUnconfined: Boolean(builtin) }, 'training confinement unavailable: custom training jobs are refused');
  }

  private requireConfinement(custom: boolean): void {
    if (this.options.runsNoJobs) return;
    if (!(custom ? this.ctx.confinement.custom : this.ctx.confinement.builtin)) throw failedPrecondition(this.ctx.confinement.unconfinedReason);
  }

  /**
   * Opens the tables; in the embedded default also fails jobs that were running when the cloud
   * stopped and queues the pending ones (in the scale-out mode, workers take over a dead worker's jobs).
   */
  async start(): Promise<void> {
    if (!this.tables) {
      await mkdir(this.options.root, { recursive: true });
      this.ownStore = await Store.open(join(this.options.root, 'store'), { readers: 1, insertLanes: 1 });
    }
    await this.jobs.init();
    const local = !this.options.dispatch;
    if (local) {
      // A data dir of before keeps its jobs, models and scripts as files: they move into the tables once.
      const imported = await importLegacyFiles(this.store, this.options.root);
      if (imported) this.options.logger?.info({ ...imported }, 'training jobs, models and scripts imported from the files of an earlier version');
    }
    if (local) for (const job of await this.jobs.withStatus(['IN_PROGRESS', 'CANCELING'])) await endInterrupted(this.jobs, job, this.options.logger);
    await rm(this.ctx.workRoot, { recursive: true, force: true });
    await rm(this.bubblewrap.jobsFolder, { recursive: true, force: true });
    if (!this.options.runsNoJobs) await this.chooseConfinement();
    this.started = true;
    if (local) for (const job of await this.jobs.withStatus(['PENDING'])) this.queue.push(job.id, job.organizationId);
    await this.refreshCounts();
    // Counts for /metrics, and cancel requests made in other processes for the jobs running here.
    this.watch = setInterval(() => void this.poll(), 1_000);
    this.watch.unref();
  }

  private async poll(): Promise<void> {
    try {
      for (const [id, run] of this.runs) if ((await this.jobs.get(id))?.status === 'CANCELING') run.stop('canceled');
      await this.refreshCounts();
    } catch (err) {
      this.options.logger?.warn({ err: (err as Error).message }, 'training jobs could not be read');
    }
  }

  private async refreshCounts(): Promise<void> {
    this.counts = await this.jobs.counts();
  }

  /** How many jobs are in each status (the cloud's /metrics; read from the tables every second). */
  jobCountsByStatus(): Map<string, number> {
    return new Map(this.counts);
  }

  /**
   * Stops taking jobs, ends running trainers and flushes state. Their jobs FAIL as interrupted, or with
   * 'release' (a worker stopping) stay IN_PROGRESS for another worker to run again.
   */
  async stop(how: 'fail' | 'release' = 'fail'): Promise<void> {
    clearInterval(this.watch);
    const draining = this.queue.drain();
    for (const run of this.runs.values()) run.stop(how === 'release' ? 'release' : 'shutdown');
    await draining;
    await Promise.allSettled([...this.running]);
    await this.jobs.flush();
    // Every run removed its own folder; the root-mode jobs folder outside the data directory goes too.
    await rm(this.bubblewrap.jobsFolder, { recursive: true, force: true });
    await this.ownStore?.close();
    this.ownStore = undefined;
  }

  async submitTrainingJob(request: SubmitTrainingJob): Promise<string> {
    checkBuiltinRequest(request);
    checkBuiltinArguments(request.arguments ?? {});
    await this.checkCommon(request);
    this.requireConfinement(false);
    return this.enqueue({
      ...request,
      datasetVersion: await this.datasetVersion(request),
      tags: [...new Set(request.tags)],
      isCustomJob: false,
      registryItemId: '',
      registryItemVersion: '',
      modelFramework: 'ONNX',
    });
  }

  async submitCustomTrainingJob(request: SubmitCustomTrainingJob): Promise<string> {
    checkCustomArguments(request.arguments ?? {});
    if (!request.registryItemId) throw invalidArgument('registry_item_id is required');
    if (!request.registryItemVersion) throw invalidArgument('registry_item_version is required');
    await this.checkCommon(request);
    this.requireConfinement(true);
    const script = await this.registry.get(request.organizationId, request.registryItemId, request.registryItemVersion);
    const datasetVersion = await this.datasetVersion(request);
    return this.enqueue({ ...request, datasetVersion, tags: [], isCustomJob: true, modelType: script.modelType, modelFramework: script.modelFramework });
  }

  /** The dataset version the job trains on: the one it names, or one made for it (recorded on the job). */
  private async datasetVersion(request: { organizationId: string; datasetId: string; datasetVersion?: number }): Promise<number | undefined> {
    const version = request.datasetVersion ?? 0;
    if (!Number.isInteger(version) || version < 0) throw invalidArgument(`dataset_version must be 0 (make one) or a version number, got ${version}`);
    return this.options.dataSource.datasetVersion?.(request.organizationId, request.datasetId, version);
  }

  private async checkCommon(request: { organizationId: string; datasetId: string; modelName: string; modelVersion: string }) {
    checkCommonFields(request);
    const owner = await this.options.dataSource.datasetOrganization(request.datasetId);
    if (owner !== request.organizationId) throw notFound(`no dataset ${request.datasetId} in organization ${request.organizationId}`);
  }

  private async enqueue(
    fields: Omit<TrainingJob, 'id' | 'status' | 'createdOn' | 'lastModified' | 'syncedModelId' | 'validationMetrics' | 'arguments'> & {
      arguments?: Record<string, string>;
    },
  ): Promise<string> {
    if (!this.started) throw failedPrecondition('the training service is starting; try again');
    const now = new Date().toISOString();
    const job: TrainingJob = {
      ...fields,
      id: randomUUID(),
      arguments: fields.arguments ?? {},
      status: 'PENDING',
      createdOn: now,
      lastModified: now,
      syncedModelId: '',
      validationMetrics: {},
    };
    // The version check, the pending limit and the insert are one transaction (JobStore.create).
    const place = await this.jobs.create(job, this.options.maxPendingPerOrg ?? 100);
    if (this.options.dispatch) {
      await this.options.dispatch.submit(job, place).catch(async (err: unknown) => {
        await this.jobs.remove(job.id).catch(() => undefined);
        throw err;
      });
    } else this.queue.push(job.id, job.organizationId);
    void this.refreshCounts().catch(() => undefined);
    return job.id;
  }

  /**
   * Runs a job here if it may run: PENDING, or (takeOver, a worker taking a dead worker's job) left
   * IN_PROGRESS or CANCELING. Resolves when the run has ended: 'ran'; 'skipped' when the job was not
   * there to run (finished, canceled, deleted); 'busy' when options.perOrganization jobs of its
   * organization run already; 'taken-too-often' when a takeover found maxJobTakes runs that ended with
   * their worker stopped, and ended the job FAILED instead. options.onClaimed is called once the job is
   * this process's to run.
   */
  async runClaimed(
    id: string,
    queueJobId: string,
    takeOver: boolean,
    options: { perOrganization?: number; onClaimed?: () => Promise<void>; runner?: string } = {},
  ): Promise<'ran' | 'skipped' | 'busy' | 'taken-too-often'> {
    const token = randomUUID();
    const job = await this.jobs.claim(id, token, queueJobId, takeOver, options.perOrganization, this.options.maxJobTakes ?? 3);
    if (job === undefined || job === 'busy' || job === 'taken-too-often') return job ?? 'skipped';
    const run = new TrainingRun(job, this.ctx, token);
    this.runs.set(id, run);
    const task = (async () => {
      await options.onClaimed?.();
      if (job.status !== 'PENDING') await run.restartNotice();
      if (options.runner) await this.jobs.appendLog(id, { level: 'info', time: new Date().toISOString(), message: `run by ${options.runner}` });
      // A span when tracing is on (--otlp-endpoint): the job's whole run, from its start to its end state.
      await inSpan('training job', { 'platform.training_job_id': id, 'platform.model_name': job.modelName }, () => run.execute());
    })();
    this.running.add(task);
    try {
      await task;
    } finally {
      this.running.delete(task);
      this.runs.delete(id);
      void this.refreshCounts().catch(() => undefined);
    }
    return 'ran';
  }

  /** Removes a script version; refused while a pending job of the organization still needs it. */
  async deleteTrainingScript(organizationId: string, registryItemId: string, version: string): Promise<void> {
    checkOrganizationId(organizationId);
    const waiting = (await this.jobs.list(organizationId, 'PENDING')).find((j) => j.registryItemId === registryItemId && j.registryItemVersion === version);
    if (waiting) {
      throw failedPrecondition(`training script ${registryItemId} version ${version} is needed by pending job ${waiting.id}; cancel it first`);
    }
    await this.registry.delete(organizationId, registryItemId, version);
  }

  async getTrainingJob(id: string): Promise<TrainingJob> {
    const job = await this.jobs.get(id);
    if (!job) throw notFound(`no training job with id ${id}`);
    return job;
  }

  listTrainingJobs(organizationId: string, status?: TrainingStatus): Promise<TrainingJob[]> {
    return this.jobs.list(organizationId, status);
  }

  /** PENDING jobs end CANCELED at once; running ones go CANCELING until their process group is gone. */
  async cancelTrainingJob(id: string): Promise<void> {
    const now = new Date().toISOString();
    const result = await this.jobs.cancel(id, now);
    if (!result) throw notFound(`no training job with id ${id}`);
    const { before } = result;
    if (isFinished(before)) throw failedPrecondition(`training job ${id} has already finished (${before}); only unfinished jobs can be canceled`);
    if (before === 'PENDING') {
      this.queue.remove(id);
      await this.jobs.appendLog(id, { level: 'info', time: now, message: 'canceled before it started' });
      await this.jobs.closeLog(id);
    } else this.runs.get(id)?.stop('canceled'); // a run in another process sees CANCELING within a second
    void this.refreshCounts().catch(() => undefined);
  }

  async deleteCompletedTrainingJob(id: string): Promise<void> {
    const job = await this.getTrainingJob(id);
    if (!isFinished(job.status)) {
      throw failedPrecondition(`training job ${id} is ${job.status}; only a finished job (COMPLETED, FAILED or CANCELED) can be deleted`);
    }
    await this.jobs.remove(id);
    void this.refreshCounts().catch(() => undefined);
  }

  /**
   * One page of the job's log; page_token is the index of the first entry to return. nextPageToken is
   * empty as soon as no entry is left now, running or not (a reader that pages until it is empty must
   * end); resumePageToken is always the position after this page, which a follower of a running job
   * passes back later to get only the entries appended since.
   */
  async getTrainingJobLogs(id: string, pageToken = ''): Promise<{ logs: TrainingLogEntry[]; nextPageToken: string; resumePageToken: string }> {
    await this.getTrainingJob(id); // NOT_FOUND for an unknown job
    const start = pageToken === '' ? 0 : Number(pageToken);
    if (!Number.isInteger(start) || start < 0) throw invalidArgument(`page_token '${pageToken}' is not a token this service returned`);
    const { entries: logs, total } = await this.jobs.readLog(id, start, logPageSize);
    const next = start + logs.length;
    return { logs, nextPageToken: next < total ? String(next) : '', resumePageToken: String(next) };
  }
}
