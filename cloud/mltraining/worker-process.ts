// The body of `platform-cloud worker` (issue 33): opens the scale-out stores (PostgreSQL and S3, as
// resolveBackend in cloud/server/backend-options.ts checked them), the training service with its
// settings from the environment (training-settings.ts), the pg-boss queue, and runs TrainingWorker
// (worker.ts) until stop(). The subcommand and its flags, shared with `serve`, are in
// cloud/server/worker-command.ts.
import { join } from 'node:path';
import type { Logger } from 'pino';
import { PgStore } from '../store/pg-store.js';
import { S3BlobStore } from '../store/s3-blob-store.js';
import { CloudTrainingDataSource } from './cloud-data-source.js';
import { MLTraining } from './ml-training.js';
import { trainingSettingsFromEnv } from './training-settings.js';
import { TrainingWorker } from './worker.js';
import { BossTrainingDispatch, openBoss } from './worker-queue.js';

export interface TrainingWorkerProcessOptions {
  /** postgres://... (--backend-store-uri). */
  backendStoreUri: string;
  /** s3://bucket/prefix (--artifacts-destination). */
  artifactsDestination: string;
  /** An S3-compatible service other than AWS (--s3-endpoint). */
  s3Endpoint?: string;
  /** Local scratch: job folders (<dataDir>/mltraining/work). Nothing durable is kept here. */
  dataDir: string;
  logger: Logger;
}

export interface RunningTrainingWorker {
  /** How the worker names itself in job logs (`worker <host>:<pid>`). */
  name: string;
  /** Hands running jobs back to the queue (another worker runs them again) and closes everything. */
  stop(): Promise<void>;
}

export async function runTrainingWorker(options: TrainingWorkerProcessOptions): Promise<RunningTrainingWorker> {
  const logger = options.logger.child({ process: 'training-worker' });
  // First: a bad setting stops the worker before it touches the stores.
  const settings = trainingSettingsFromEnv();
  const blobs = await S3BlobStore.open(options.artifactsDestination, { endpoint: options.s3Endpoint });
  const slots = settings.concurrency ?? 2;
  // Each slot's run writes through the pool; the queue and the locks have connections of their own.
  const store = await PgStore.open(options.backendStoreUri, { blobs, poolSize: Math.max(4, slots * 2) }).catch((err: unknown) => {
    blobs.close();
    throw err;
  });
  const boss = await openBoss(options.backendStoreUri, {
    supervise: true,
    onError: (err) => logger.warn({ err: err.message }, 'training queue error'),
  });
  const training = new MLTraining({
    ...settings,
    root: join(options.dataDir, 'mltraining'),
    store,
    dataSource: new CloudTrainingDataSource(store),
    dispatch: new BossTrainingDispatch(boss),
    logger,
  });
  await training.start();
  const worker = new TrainingWorker({
    url: options.backendStoreUri,
    training,
    boss,
    slots,
    perOrganization: settings.perOrganizationConcurrency ?? 1,
    logger,
  });
  worker.start();
  logger.info({ worker: worker.name, slots }, 'training worker started');
  return {
    name: worker.name,
    async stop() {
      await worker.stop();
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      await store.close();
      blobs.close();
    },
  };
}
