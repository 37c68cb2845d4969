// The ML training service's core, independent of gRPC: submit, inspect, list, cancel and delete jobs,
// run them through a queue, and recover them after a restart.
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { alreadyExists, failedPrecondition, invalidArgument, notFound, resourceExhausted } from '../../core/serving/status-error.js';
import type { TrainingDataSource } from './data-source.js';
import { JobStore, logPageSize } from './job-store.js';
import { ModelArtefactStore } from './model-artefacts.js';
import { killOrphans } from './orphan-trainers.js';
import { defaultPython } from './python-command.js';
import { TrainingScriptRegistry, type RegistryLimits } from './script-registry.js';
import { checkBuiltinArguments, checkCustomArguments } from './training-arguments.js';
import { TrainingQueue } from './training-queue.js';
import { TrainingRun, type TrainingRunContext } from './training-run.js';
import type { ProcessLimits } from './trainer-process.js';
import type { DiskLimits } from './job-disk-watch.js';
import { BubblewrapConfinement, NoConfinement, type SandboxSettings } from './trainer-sandbox.js';
import { isFinished, modelTypes, type ModelType, type TrainingJob, type TrainingLogEntry, type TrainingStatus } from './training-job.js';
import { inSpan } from '../../core/serving/telemetry/tracing.js';

export interface MLTrainingOptions {
  /** Folder for jobs, logs, registry, models and work files (the cloud uses <data-dir>/mltraining). */
  root: string;
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
  /** Trainer confinement with bubblewrap (trainer-sandbox.ts); every trainer runs in it. */
  sandbox?: SandboxSettings;
  /**
   * When bubblewrap cannot be used: run built-in trainers unconfined instead of refusing them
   * (PLATFORM_TRAINING_UNCONFINED=1). Custom scripts are refused all the same.
   */
  allowUnconfinedBuiltins?: boolean;
  logger?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

export interface SubmitTrainingJob {
  organizationId: string;
  datasetId: string;
  /** A version of the dataset; 0 or absent: a version is made for the job. */
  datasetVersion?: number;
  modelName: string;
  modelVersion: string;
  modelType: ModelType;
  tags: string[];
  arguments?: Record<string, string>;
}

export interface SubmitCustomTrainingJob {
  organizationId: string;
  datasetId: string;
  /** A version of the dataset; 0 or absent: a version is made for the job. */
  datasetVersion?: number;
  registryItemId: string;
  registryItemVersion: string;
  modelName: string;
  modelVersion: string;
  arguments?: Record<string, string>;
}

/** Two, so that one organization's long job (per-organization limit 1) does not stop every other's. */
export const defaultConcurrency = 2;

const nameRule = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const idRule = /^[A-Za-z0-9_-]{1,128}$/;

function requireText(field: string, value: string, rule: RegExp, what: string): void {
  if (!value) throw invalidArgument(`${field} is required`);
  if (!rule.test(value)) throw invalidArgument(`${field} '${value}' must be ${what}`);
}

export function checkOrganizationId(value: string, field = 'organization_id'): void {
  requireText(field, value, idRule, '1-128 letters, digits, - or _');
}

export class MLTraining {
  readonly registry: TrainingScriptRegistry;
  readonly artefacts: ModelArtefactStore;
  private readonly store: JobStore;
  private readonly jobs = new Map<string, TrainingJob>();
  private readonly runs = new Map<string, TrainingRun>();
  private readonly queue: TrainingQueue;
  private readonly ctx: TrainingRunContext;
  private readonly bubblewrap: BubblewrapConfinement;
  private started = false;

  constructor(private readonly options: MLTrainingOptions) {
    this.store = new JobStore(options.root);
    this.registry = new TrainingScriptRegistry(options.root, options.registryLimits);
    this.artefacts = new ModelArtefactStore(options.root);
    const concurrency = options.concurrency ?? defaultConcurrency;
    this.queue = new TrainingQueue({ concurrency, perOrganization: options.perOrganizationConcurrency ?? 1 }, (id) => this.execute(id));
    this.ctx = {
      workRoot: join(options.root, 'work'),
      store: this.store,
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
    if (!(custom ? this.ctx.confinement.custom : this.ctx.confinement.builtin)) throw failedPrecondition(this.ctx.confinement.unconfinedReason);
  }

  /** Loads jobs and models; fails jobs that were running when the cloud stopped, requeues pending ones. */
  async start(): Promise<void> {
    await this.artefacts.load();
    const jobs = await this.store.loadAll((file, err) => this.options.logger?.warn({ file, err: err.message }, 'unreadable training job file skipped'));
    for (const job of jobs.sort((a, b) => a.createdOn.localeCompare(b.createdOn))) {
      this.jobs.set(job.id, job);
      if (job.status === 'IN_PROGRESS' || job.status === 'CANCELING') await this.recoverInterrupted(job);
    }
    await rm(this.ctx.workRoot, { recursive: true, force: true });
    await rm(this.bubblewrap.jobsFolder, { recursive: true, force: true });
    await this.chooseConfinement();
    this.started = true;
    for (const job of this.jobs.values()) if (job.status === 'PENDING') this.queue.push(job.id, job.organizationId);
  }

  private async recoverInterrupted(job: TrainingJob): Promise<void> {
    killOrphans(job.id, job.pid);
    const canceled = job.status === 'CANCELING';
    const now = new Date().toISOString();
    const message = canceled
      ? 'canceled by request (the cloud restarted while the job was stopping)'
      : 'the cloud stopped while the job was running (crash or kill); submit it again';
    Object.assign(job, {
      status: canceled ? 'CANCELED' : 'FAILED',
      errorStatus: { code: canceled ? 1 : 14, message },
      trainingEnded: now,
      lastModified: now,
      pid: undefined,
    });
    await this.store.appendLog(job.id, { level: canceled ? 'info' : 'error', time: now, message });
    await this.store.closeLog(job.id);
    await this.store.save(job);
    this.options.logger?.warn({ jobId: job.id, status: job.status }, 'training job interrupted by a restart');
  }

  /** How many jobs are in each status now (the cloud's /metrics). */
  jobCountsByStatus(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const job of this.jobs.values()) counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
    return counts;
  }

  /** Stops taking jobs, ends running trainers (their jobs FAIL as interrupted) and flushes state. */
  async stop(): Promise<void> {
    const draining = this.queue.drain();
    for (const run of this.runs.values()) run.stop('shutdown');
    await draining;
    await this.store.flush();
    // Every run removed its own folder; the root-mode jobs folder outside the data directory goes too.
    await rm(this.bubblewrap.jobsFolder, { recursive: true, force: true });
  }

  async submitTrainingJob(request: SubmitTrainingJob): Promise<string> {
    if (!modelTypes.includes(request.modelType)) {
      throw invalidArgument(`model_type must be one of ${modelTypes.map((t) => `MODEL_TYPE_${t}`).join(', ')}`);
    }
    if (request.tags.length === 0) throw invalidArgument('tags must name at least one label to train on');
    if (request.modelType === 'SINGLE_LABEL_CLASSIFICATION' && new Set(request.tags).size < 2) {
      throw invalidArgument('tags must name at least two labels for single-label classification');
    }
    for (const tag of request.tags) {
      if (!tag || tag.includes(',') || tag.length > 256) throw invalidArgument(`tags entry '${tag}' must be 1-256 characters without commas`);
    }
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
    checkOrganizationId(request.organizationId);
    requireText('dataset_id', request.datasetId, idRule, '1-128 letters, digits, - or _');
    requireText('model_name', request.modelName, nameRule, "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
    requireText('model_version', request.modelVersion, nameRule, "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit");
    const owner = await this.options.dataSource.datasetOrganization(request.datasetId);
    if (owner !== request.organizationId) throw notFound(`no dataset ${request.datasetId} in organization ${request.organizationId}`);
  }

  private enqueue(
    fields: Omit<TrainingJob, 'id' | 'status' | 'createdOn' | 'lastModified' | 'syncedModelId' | 'validationMetrics' | 'arguments'> & {
      arguments?: Record<string, string>;
    },
  ): Promise<string> {
    // Checked and claimed synchronously, so two concurrent submits cannot both take a version.
    const used =
      [...this.jobs.values()].some(
        (j) => j.organizationId === fields.organizationId && j.modelName === fields.modelName && j.modelVersion === fields.modelVersion,
      ) || this.artefacts.find(fields.organizationId, fields.modelName, fields.modelVersion);
    if (used)
      throw alreadyExists(`model_version '${fields.modelVersion}' is already used for model ${fields.modelName} in organization ${fields.organizationId}`);
    if (!this.started) throw failedPrecondition('the training service is starting; try again');
    const maxPending = this.options.maxPendingPerOrg ?? 100;
    const pending = [...this.jobs.values()].filter((j) => j.organizationId === fields.organizationId && j.status === 'PENDING').length;
    if (pending >= maxPending) {
      throw resourceExhausted(
        `organization ${fields.organizationId} already has ${pending} pending training jobs, the limit (PLATFORM_TRAINING_MAX_PENDING_PER_ORG); wait for some to start or cancel them`,
      );
    }
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
    this.jobs.set(job.id, job);
    return this.store.save(job).then(
      () => {
        this.queue.push(job.id, job.organizationId);
        return job.id;
      },
      (err) => {
        this.jobs.delete(job.id);
        throw err;
      },
    );
  }

  private async execute(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job || job.status !== 'PENDING') return;
    const run = new TrainingRun(job, this.ctx);
    this.runs.set(id, run);
    try {
      // A span when tracing is on (--otlp-endpoint): the job's whole run, from its start to its end state.
      await inSpan('training job', { 'platform.training_job_id': id, 'platform.model_name': job.modelName }, () => run.execute());
    } finally {
      this.runs.delete(id);
    }
  }

  /** Removes a script version; refused while a pending job of the organization still needs it. */
  async deleteTrainingScript(organizationId: string, registryItemId: string, version: string): Promise<void> {
    checkOrganizationId(organizationId);
    const waiting = [...this.jobs.values()].find(
      (j) => j.organizationId === organizationId && j.status === 'PENDING' && j.registryItemId === registryItemId && j.registryItemVersion === version,
    );
    if (waiting) {
      throw failedPrecondition(`training script ${registryItemId} version ${version} is needed by pending job ${waiting.id}; cancel it first`);
    }
    await this.registry.delete(organizationId, registryItemId, version);
  }

  getTrainingJob(id: string): TrainingJob {
    const job = this.jobs.get(id);
    if (!job) throw notFound(`no training job with id ${id}`);
    return structuredClone(job);
  }

  listTrainingJobs(organizationId: string, status?: TrainingStatus): TrainingJob[] {
    return [...this.jobs.values()]
      .filter((j) => j.organizationId === organizationId && (!status || j.status === status))
      .sort((a, b) => a.createdOn.localeCompare(b.createdOn))
      .map((j) => structuredClone(j));
  }

  /** PENDING jobs end CANCELED at once; running ones go CANCELING until their process group is gone. */
  async cancelTrainingJob(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) throw notFound(`no training job with id ${id}`);
    if (isFinished(job.status)) throw failedPrecondition(`training job ${id} has already finished (${job.status}); only unfinished jobs can be canceled`);
    if (job.status === 'CANCELING') return;
    const now = new Date().toISOString();
    if (job.status === 'PENDING' && this.queue.remove(id)) {
      Object.assign(job, {
        status: 'CANCELED',
        errorStatus: { code: 1, message: 'canceled by request before it started' },
        lastModified: now,
        trainingEnded: now,
      });
      await this.store.save(job);
      await this.store.appendLog(id, { level: 'info', time: now, message: 'canceled before it started' });
      await this.store.closeLog(id);
      return;
    }
    Object.assign(job, { status: 'CANCELING', lastModified: now });
    await this.store.save(job);
    this.runs.get(id)?.stop('canceled');
  }

  async deleteCompletedTrainingJob(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) throw notFound(`no training job with id ${id}`);
    if (!isFinished(job.status)) {
      throw failedPrecondition(`training job ${id} is ${job.status}; only a finished job (COMPLETED, FAILED or CANCELED) can be deleted`);
    }
    this.jobs.delete(id);
    await this.store.remove(id);
  }

  /**
   * One page of the job's log; page_token is the index of the first entry to return. nextPageToken is
   * empty as soon as no entry is left now, running or not (a reader that pages until it is empty must
   * end); resumePageToken is always the position after this page, which a follower of a running job
   * passes back later to get only the entries appended since.
   */
  async getTrainingJobLogs(id: string, pageToken = ''): Promise<{ logs: TrainingLogEntry[]; nextPageToken: string; resumePageToken: string }> {
    this.getTrainingJob(id); // NOT_FOUND for an unknown job
    const start = pageToken === '' ? 0 : Number(pageToken);
    if (!Number.isInteger(start) || start < 0) throw invalidArgument(`page_token '${pageToken}' is not a token this service returned`);
    const all = await this.store.readLog(id);
    const logs = all.slice(start, start + logPageSize);
    const next = start + logs.length;
    return { logs, nextPageToken: next < all.length ? String(next) : '', resumePageToken: String(next) };
  }
}
