// Runs one job from start to end: export the dataset, start the trainer (built-in PyTorch script or a
// registry script), follow its events, collect the model it wrote, record the outcome.
import { status as grpcStatus } from '@grpc/grpc-js';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportDataset } from './dataset-export.js';
import type { TrainingDataSource } from './data-source.js';
import { jobIdVariable } from './orphan-trainers.js';
import type { JobStore, RunWrite } from './job-store.js';
import type { SqlSession } from '../store/tabular.js';
import { frameworkOf, type ModelArtefactStore } from './model-artefacts.js';
import type { TrainingScriptRegistry } from './script-registry.js';
import { TrainerProcess, type ProcessLimits, type TrainerProcessSpec, type TrainerEvent, type TrainerOutcome } from './trainer-process.js';
import type { JobFolders, TrainerConfinement } from './trainer-sandbox.js';
import { watchDisk, type DiskLimits } from './job-disk-watch.js';
import { isFinished, type ErrorStatus, type TrainingJob, type TrainingLogEntry } from './training-job.js';

// The built-in trainer's folder; it is copied into each job folder and run from there.
const builtinFolder = join(dirname(fileURLToPath(import.meta.url)), 'python');

export interface TrainingRunContext {
  workRoot: string;
  store: JobStore;
  dataSource: TrainingDataSource;
  registry: TrainingScriptRegistry;
  artefacts: ModelArtefactStore;
  python: string;
  builtinLimits: ProcessLimits;
  customLimits: ProcessLimits;
  /** Defaults for the built-in trainer's arguments; a job's own arguments win. */
  builtinDefaults: Record<string, string>;
  trainerThreads: number;
  killGraceMs: number;
  /**
   * How trainers are confined: `custom` for registry scripts, `builtin` for the built-in trainer. Undefined
   * when confinement is unavailable; such jobs fail with FAILED_PRECONDITION and `unconfinedReason`.
   */
  confinement: { custom?: TrainerConfinement; builtin?: TrainerConfinement; unconfinedReason: string };
  /** What a job folder may hold in total (job-disk-watch.ts). */
  disk: DiskLimits;
}

/** Raised inside a run to fail the job with a given status. */
class JobFailure extends Error {
  constructor(readonly status: ErrorStatus) {
    super(status.message);
  }
}

export class TrainingRun {
  private readonly abort = new AbortController();
  private process?: TrainerProcess;
  private stopReason?: 'canceled' | 'shutdown' | 'release';
  private lastError = '';
  private overLimit?: string;
  /** The job was deleted or another run owns it now: this run writes nothing more. */
  private lost = false;

  constructor(
    private readonly job: TrainingJob,
    private readonly ctx: TrainingRunContext,
    /** This run's claim on the job (JobStore.claim): its writes count only while it owns the job. */
    private readonly token: string,
  ) {}

  /**
   * Logs that the job runs again: the worker that ran it before stopped, killed or crashed (its lock was
   * found free) or shutting down (it handed the job back, and logged so in the job's log).
   */
  async restartNotice(): Promise<void> {
    const canceling = this.job.status === 'CANCELING';
    Object.assign(this.job, { status: canceling ? 'CANCELING' : 'PENDING', progress: undefined, validationMetrics: {}, pid: undefined });
    if (canceling) this.stop('canceled');
    await this.log('warn', 'the worker that ran this job stopped before the job ended (a crash, a kill or a shutdown); the job runs again from the start');
  }

  /**
   * Stops the run: 'canceled' ends the job CANCELED, 'shutdown' FAILED (the cloud is stopping),
   * 'release' leaves it IN_PROGRESS for another worker to run again (a worker is stopping).
   */
  stop(reason: 'canceled' | 'shutdown' | 'release'): void {
    this.stopReason ??= reason;
    this.abort.abort();
    this.process?.cancel();
  }

  async execute(): Promise<void> {
    const job = this.job;
    let folders: JobFolders | undefined;
    try {
      await this.update({ status: 'IN_PROGRESS', trainingStarted: new Date().toISOString() });
      await this.log(
        'info',
        job.isCustomJob
          ? `starting custom training with ${job.registryItemId} version ${job.registryItemVersion}`
          : `starting built-in ${job.modelType} training on tags ${job.tags.join(', ')}`,
      );
      const confinement = job.isCustomJob ? this.ctx.confinement.custom : this.ctx.confinement.builtin;
      if (!confinement) throw new JobFailure({ code: grpcStatus.FAILED_PRECONDITION, message: this.ctx.confinement.unconfinedReason });
      if (confinement.kind === 'none') await this.log('warn', 'the built-in trainer runs unconfined (PLATFORM_TRAINING_UNCONFINED=1)');
      // Everything the trainer reads is staged into its job folder first: inside the sandbox it sees
      // nothing else (no cloud to call back, no registry, no data directory).
      folders = await confinement.folders(this.ctx.workRoot, job.id);
      const exported = await exportDataset(
        this.ctx.dataSource,
        job.organizationId,
        job.datasetId,
        join(folders.work, 'dataset'),
        job.isCustomJob ? undefined : job.tags,
        this.abort.signal,
        job.datasetVersion,
      );
      await this.log(
        'info',
        `exported ${exported.images} images: ${
          Object.entries(exported.labelCounts)
            .map(([label, n]) => `${label} (${n.images} images, ${n.boxes} boxes)`)
            .join(', ') || 'no labels'
        }`,
      );
      if (exported.images === 0) throw new JobFailure({ code: grpcStatus.FAILED_PRECONDITION, message: `dataset ${job.datasetId} has no images` });
      const output = join(folders.work, 'output');
      await mkdir(output, { recursive: true });
      const spec = await this.command(folders, relative(folders.work, exported.datasetFile));
      await confinement.handOver(folders);
      const outcome = await this.runTrainer(
        { ...spec, confined: confinement.wrap(spec.command, spec.args, spec.env ?? {}, spec.limits, folders) },
        folders.work,
      );
      this.throwIfStopped();
      this.check(outcome);
      const files = await readdir(output, { recursive: true });
      if (files.length === 0) {
        throw new JobFailure({ code: grpcStatus.FAILED_PRECONDITION, message: 'the trainer exited without writing a model to --model_output_directory' });
      }
      const skipped: string[] = [];
      const { artefact, blobKeys } = await this.ctx.artefacts.upload(
        output,
        {
          organizationId: job.organizationId,
          modelName: job.modelName,
          modelVersion: job.modelVersion,
          modelType: job.modelType,
          modelFramework: job.isCustomJob ? (job.modelFramework ?? frameworkOf(files.map(String))) : 'ONNX',
          trainingJobId: job.id,
          validationMetrics: job.validationMetrics,
        },
        skipped,
      );
      if (skipped.length) await this.log('warn', `not stored (only regular files and folders are): ${skipped.slice(0, 20).join(', ')}`);
      // The model's row and the job's COMPLETED status commit together, and only while this run owns
      // the job: a job is completed once, with one model, even when a worker that was thought dead
      // comes back.
      const written = await this.finish({ status: 'COMPLETED', syncedModelId: artefact.id, modelFramework: artefact.modelFramework }, (tx) =>
        this.ctx.artefacts.record(tx, artefact),
      );
      if (!('status' in written) || written.status !== 'COMPLETED') {
        await this.ctx.artefacts.discard({ blobKeys });
        if ('status' in written && written.status === 'CANCELING') throw new Error('stopped');
        return;
      }
      await this.log('info', `stored model ${job.modelName} version ${job.modelVersion}: ${artefact.files.map((f) => f.name).join(', ')}`);
    } catch (err) {
      await this.fail(err);
    } finally {
      if (folders) await rm(folders.host, { recursive: true, force: true }).catch(() => undefined);
      await this.ctx.store.closeLog(job.id).catch(() => undefined);
    }
  }

  /** The trainer's command with the paths it sees (inside the sandbox); stages its code into the job folder. */
  private async command(folders: JobFolders, datasetFile: string): Promise<TrainerProcessSpec> {
    const job = this.job;
    const inside = folders.inside;
    const common = [`--dataset_file=${inside.work}/${datasetFile}`, `--model_output_directory=${inside.work}/output`];
    if (!job.isCustomJob) {
      await cp(builtinFolder, folders.trainer, { recursive: true, filter: (path) => !path.includes('__pycache__') });
      const args = { ...this.ctx.builtinDefaults, ...job.arguments };
      return {
        command: this.ctx.python,
        args: [
          `${inside.trainer}/train_builtin.py`,
          ...common,
          `--model_type=${job.modelType!.toLowerCase()}`,
          `--labels=${job.tags.join(',')}`,
          `--num_threads=${this.ctx.trainerThreads}`,
          ...Object.entries(args).map(([k, v]) => `--${k}=${v}`),
        ],
        cwd: folders.host,
        env: { [jobIdVariable]: job.id },
        limits: this.ctx.builtinLimits,
      };
    }
    const script = await this.ctx.registry.get(job.organizationId, job.registryItemId, job.registryItemVersion);
    await this.ctx.registry.stage(script, folders.script);
    const entry = [inside.script, ...script.entrypoint.split('/')].join('/');
    const typeArg = job.modelType ? [`--model_type=${job.modelType.toLowerCase()}`] : [];
    const userArgs = Object.entries(job.arguments).map(([k, v]) => `--${k}=${v}`);
    const isPython = entry.endsWith('.py');
    return {
      command: isPython ? this.ctx.python : entry,
      args: [...(isPython ? [entry] : []), ...common, ...typeArg, ...userArgs],
      cwd: folders.host,
      env: { PYTHONPATH: inside.script, [jobIdVariable]: job.id, PLATFORM_ORGANIZATION_ID: job.organizationId },
      limits: this.ctx.customLimits,
    };
  }

  private async runTrainer(spec: TrainerProcessSpec, workFolder: string): Promise<TrainerOutcome> {
    this.throwIfStopped();
    // Events are handled one after another, in the order the trainer wrote them (TrainerProcess): handled
    // concurrently, a progress event whose handler logs first could save its metric after the final
    // `metrics` event. The outcome comes once every event was handled.
    this.process = new TrainerProcess({ ...spec, killGraceMs: this.ctx.killGraceMs }, (event) => this.onEvent(event));
    if (this.stopReason) this.process.cancel();
    await this.update({ pid: this.process.pid });
    const stopWatching = watchDisk(workFolder, this.ctx.disk, (why) => {
      this.overLimit = why;
      this.process?.stopOverLimit();
    });
    const outcome = await this.process.done.finally(stopWatching);
    return outcome;
  }

  private async onEvent(event: TrainerEvent): Promise<void> {
    if (event.kind === 'log') {
      if (event.level === 'error') this.lastError = event.message;
      await this.log(event.level, event.message);
    } else if (event.kind === 'progress') {
      const progress = {
        epoch: event.epoch,
        totalEpochs: event.totalEpochs,
        loss: event.loss,
        validationMetricName: event.metricName,
        validationMetric: event.metric,
        imagesPerSecond: event.imagesPerSecond,
      };
      await this.log(
        'info',
        `epoch ${event.epoch}/${event.totalEpochs}: loss ${event.loss.toFixed(4)}, validation ${event.metricName} ${event.metric.toFixed(4)}, ${event.imagesPerSecond.toFixed(0)} images/s`,
      );
      await this.update({ progress, validationMetrics: { ...this.job.validationMetrics, [event.metricName]: event.metric } });
    } else {
      await this.update({ validationMetrics: event.metrics });
    }
  }

  private check(outcome: TrainerOutcome): void {
    const limits = this.job.isCustomJob ? this.ctx.customLimits : this.ctx.builtinLimits;
    const why = this.lastError || outcome.stderrTail.at(-1) || '';
    if (outcome.ending === 'spawn-failed') throw new JobFailure({ code: grpcStatus.INTERNAL, message: `the trainer could not start: ${outcome.spawnError}` });
    if (outcome.ending === 'over-limit') throw new JobFailure({ code: grpcStatus.RESOURCE_EXHAUSTED, message: `${this.overLimit} and was stopped` });
    if (outcome.ending === 'timed-out') {
      throw new JobFailure({ code: grpcStatus.DEADLINE_EXCEEDED, message: `the trainer exceeded its time limit of ${limits.wallSeconds} s and was stopped` });
    }
    if (outcome.signal === 'SIGXCPU' || (outcome.signal === 'SIGKILL' && limits.cpuSeconds && why === '')) {
      throw new JobFailure({ code: grpcStatus.RESOURCE_EXHAUSTED, message: `the trainer exceeded its CPU time limit of ${limits.cpuSeconds} s` });
    }
    if (/MemoryError|Cannot allocate memory|std::bad_alloc|DefaultCPUAllocator/.test(outcome.stderrTail.join('\n'))) {
      throw new JobFailure({ code: grpcStatus.RESOURCE_EXHAUSTED, message: `the trainer ran out of memory (limit ${limits.memoryBytes} bytes): ${why}` });
    }
    if (outcome.exitCode === 2 && !this.job.isCustomJob)
      throw new JobFailure({ code: grpcStatus.FAILED_PRECONDITION, message: why || 'the dataset cannot train this model' });
    if (outcome.exitCode !== 0) {
      const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.exitCode}`;
      throw new JobFailure({ code: grpcStatus.INTERNAL, message: `the trainer ${how}${why ? `: ${why}` : ''}` });
    }
  }

  private throwIfStopped(): void {
    if (this.stopReason) throw new Error('stopped');
  }

  private async fail(err: unknown): Promise<void> {
    if (this.lost) return;
    if (this.stopReason === 'release') {
      await this.log('warn', 'the worker running the job is stopping; another worker runs it again');
      // Handed back, not stopped by the job: this take does not count towards PLATFORM_TRAINING_JOB_MAX_TAKES.
      await this.ctx.store.handBack(this.job.id, this.token);
      return;
    }
    if (this.stopReason === 'canceled') {
      await this.log('info', 'the job was canceled');
      await this.finish({ status: 'CANCELED', errorStatus: { code: grpcStatus.CANCELLED, message: 'canceled by request' } });
      return;
    }
    const errorStatus =
      this.stopReason === 'shutdown'
        ? { code: grpcStatus.UNAVAILABLE, message: 'the cloud stopped while the job was running; submit it again' }
        : err instanceof JobFailure
          ? err.status
          : {
              code: (err as { code?: number }).code && (err as { code: number }).code < 17 ? (err as { code: number }).code : grpcStatus.INTERNAL,
              message: (err as Error).message,
            };
    await this.log('error', `training failed: ${errorStatus.message}`);
    await this.finish({ status: 'FAILED', errorStatus });
  }

  private finish(changes: Partial<TrainingJob>, also?: (tx: SqlSession) => Promise<void>): Promise<RunWrite> {
    return this.update({ ...changes, trainingEnded: new Date().toISOString(), pid: undefined }, also);
  }

  private async update(changes: Partial<TrainingJob>, also?: (tx: SqlSession) => Promise<void>): Promise<RunWrite> {
    // CANCELING set by a cancel request stays until the run ends (JobStore.saveRun keeps it too when
    // the request came through another process).
    if (this.job.status === 'CANCELING' && changes.status === 'IN_PROGRESS') delete changes.status;
    Object.assign(this.job, changes, { lastModified: new Date().toISOString() });
    const written = await this.ctx.store.saveRun(this.job, this.token, also);
    if (!('status' in written)) {
      // Deleted, or taken over by another worker (this one was thought dead): stop, write nothing more.
      this.lost = true;
      this.stop('canceled');
    } else if (written.status === 'CANCELING' && !isFinished(this.job.status)) {
      this.job.status = 'CANCELING';
      this.stop('canceled');
    }
    return written;
  }

  private log(level: TrainingLogEntry['level'], message: string): Promise<void> {
    if (this.lost) return Promise.resolve();
    // A log that cannot be written (disk full) must not leave the job stuck IN_PROGRESS.
    return this.ctx.store.appendLog(this.job.id, { level, time: new Date().toISOString(), message }).catch(() => undefined);
  }
}
