// The data pipeline half of `platform-cloud worker` (issue 33; cloud/server/worker-command.ts): opens the
// scale-out stores (PostgreSQL and S3), the same query engine as a scale-out `serve` (a DuckDB per query
// over the organization's sealed segments, fetched from S3 into <data-dir>/segment-cache, and its
// unsealed tail from PostgreSQL: sealed/scale-out-query.ts) with the same limits from the same
// environment (query-settings.ts), and the pipeline queue, and runs WindowWorker until stop().
// Settings (environment of `platform-cloud worker`), besides the query limits of serve:
//   PLATFORM_QUERY_PIPELINE_WORKER_CONCURRENCY  windows run at once by this worker (default 2)
//   PLATFORM_QUERY_PIPELINE_RETRIES, PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S  as serve's (a failed
//                                   window's next attempt is recorded by whichever process ran it)
//   PLATFORM_QUERY_PIPELINE_WINDOW_MAX_TAKES  takes of one window attempt that may end with its worker
//                                   stopped; the next take records it FAILED unrun (default 3)
//   PLATFORM_TEST_PIPELINE_WINDOW_DELAY_MS  test only: see WindowWorkerOptions.testDelayMs
import type { Logger } from 'pino';
import { envNumber } from '../../../core/serving/env.js';
import { PgStore } from '../../store/pg-store.js';
import { S3BlobStore } from '../../store/s3-blob-store.js';
import type { MingoPool } from '../mql/mingo-pool.js';
import { MqlRunner } from '../mql/mql-runner.js';
import { mingoPoolFromEnv, mqlOptionsFromEnv, queryAdmissionFromEnv, queryLimitsFromEnv } from '../query-settings.js';
import { startScaleOutQuery } from '../sealed/scale-out-query.js';
import { PipelineStore } from './pipeline-store.js';
import { WindowRunner } from './pipeline-window.js';
import { openWindowQueue } from './window-queue.js';
import { WindowWorker } from './window-worker.js';

export interface PipelineWorkerProcessOptions {
  /** postgres://... (--backend-store-uri). */
  backendStoreUri: string;
  /** s3://bucket/prefix (--artifacts-destination). */
  artifactsDestination: string;
  /** An S3-compatible service other than AWS (--s3-endpoint). */
  s3Endpoint?: string;
  /** Local scratch: the segment cache and the queries' temp files. Nothing durable is kept here. */
  dataDir: string;
  /** How the worker names itself in its log lines; the training worker's name, so both say the same. */
  name?: string;
  logger: Logger;
}

export interface RunningPipelineWorker {
  name: string;
  /** Takes no more windows, lets the running ones finish, and closes everything. */
  stop(): Promise<void>;
}

export async function runPipelineWorker(options: PipelineWorkerProcessOptions): Promise<RunningPipelineWorker> {
  const logger = options.logger.child({ process: 'pipeline-worker' });
  const blobs = await S3BlobStore.open(options.artifactsDestination, { endpoint: options.s3Endpoint });
  const slots = envNumber('PLATFORM_QUERY_PIPELINE_WORKER_CONCURRENCY', 2, 1);
  const closers: (() => Promise<void> | void)[] = [() => blobs.close()];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const store = await PgStore.open(options.backendStoreUri, { blobs, poolSize: Math.max(4, slots * 2) });
    closers.push(() => store.close());
    // No sealing here: the serve processes elect the sealer; a worker only reads segments.
    const scaleOut = startScaleOutQuery(store, { dataDir: options.dataDir, logger, seal: false });
    closers.push(() => scaleOut.stop());
    const pool = lazyMingoPool();
    closers.push(() => pool.close());
    const pipelines = new PipelineStore(store);
    const mql = new MqlRunner(
      scaleOut.connect,
      pool,
      (org, id) => pipelines.readSink(org, id),
      mqlOptionsFromEnv(queryLimitsFromEnv(), queryAdmissionFromEnv()),
    );
    const runner = new WindowRunner(
      pipelines,
      mql,
      {
        retries: envNumber('PLATFORM_QUERY_PIPELINE_RETRIES', 3, 0),
        retryBackoffMs: envNumber('PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S', 60, 1) * 1000,
      },
      logger,
    );
    const boss = await openWindowQueue(options.backendStoreUri, {
      supervise: true,
      onError: (err) => logger.warn({ err: err.message }, 'pipeline queue error'),
    });
    closers.push(() => boss.stop({ graceful: false, wait: true }));
    const worker = new WindowWorker({
      boss,
      pipelines,
      runner,
      slots,
      name: options.name,
      maxTakes: envNumber('PLATFORM_QUERY_PIPELINE_WINDOW_MAX_TAKES', 3, 1),
      testDelayMs: envNumber('PLATFORM_TEST_PIPELINE_WINDOW_DELAY_MS', undefined, 0),
      logger,
    });
    worker.start();
    closers.push(() => worker.stop());
    logger.info({ worker: worker.name, slots }, 'pipeline worker started');
    return { name: worker.name, stop: close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The MQL evaluator's child processes (about 100 MB each under tsx), started with the first window whose
 * stages DuckDB cannot run all of, not with the worker: a worker that only trains, or whose windows run
 * in DuckDB, starts none. That first window pays their start within its time limit; serve starts them
 * ahead instead, as its users' queries are interactive.
 */
function lazyMingoPool(): Pick<MingoPool, 'run' | 'close'> {
  let pool: MingoPool | undefined;
  return {
    run: (task, signal) => (pool ??= mingoPoolFromEnv()).run(task, signal),
    close: async () => pool?.close(),
  };
}
