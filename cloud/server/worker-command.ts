// `platform-cloud worker` (issue 33's scale-out mode): runs training jobs and data pipeline windows taken
// from the pg-boss queues in the cloud's PostgreSQL (cloud/mltraining/worker-process.ts,
// cloud/query/pipelines/window-worker-process.ts), with the stores' flags of `serve`
// (backend-options.ts), both required: a worker has no embedded mode, its work comes from the database
// that the serve processes share. Prints "platform-cloud worker running <name>" once it takes both;
// SIGTERM or SIGINT hands its running training jobs back to the queue (another worker runs them), lets
// its running pipeline windows finish, and exits.
import { Option, type Command } from 'commander';
import { pino } from 'pino';
import { backendOptions, environmentHelp, redactUri, resolveBackend } from './backend-options.js';

export function addWorkerCommand(program: Command, defaultDataDir: string): void {
  const worker: Command = program
    .command('worker')
    .description(
      'scale-out mode: run training jobs and data pipeline windows from the queues in --backend-store-uri (with no worker running, they wait there); prints "platform-cloud worker running <name>" when ready',
    )
    .addOption(new Option('--data-dir <dir>', 'scratch space of the jobs and pipeline windows run here (nothing durable)').default(defaultDataDir))
    .addHelpText('after', environmentHelp);
  for (const option of backendOptions()) worker.addOption(option);
  worker.action(async (opts: { dataDir: string; backendStoreUri?: string; artifactsDestination?: string; s3Endpoint?: string }) => {
    let backend;
    try {
      backend = resolveBackend(opts);
    } catch (err) {
      worker.error((err as Error).message);
    }
    if (backend.mode !== 'scale-out') {
      worker.error(
        'worker runs in the scale-out mode only: give --backend-store-uri postgres://... and --artifacts-destination s3://bucket/prefix (or PLATFORM_BACKEND_STORE_URI and PLATFORM_ARTIFACTS_DESTINATION), the stores its serve processes share',
      );
    }
    const logger = pino({ name: 'platform-cloud-worker' }, pino.destination(2));
    let running: { name: string; stop(): Promise<void> };
    try {
      // Loaded here: the queues (pg-boss), the AWS SDK and the query engine cost the other commands nothing.
      const { runTrainingWorker } = await import('../mltraining/worker-process.js');
      const { runPipelineWorker } = await import('../query/pipelines/window-worker-process.js');
      const stores = {
        backendStoreUri: backend.backendStoreUri,
        artifactsDestination: backend.artifactsDestination,
        s3Endpoint: backend.s3Endpoint,
        dataDir: opts.dataDir,
        logger,
      };
      const training = await runTrainingWorker(stores);
      const pipelines = await runPipelineWorker({ ...stores, name: training.name }).catch(async (err: unknown) => {
        await training.stop();
        throw err;
      });
      running = {
        name: training.name,
        stop: async () => {
          await Promise.all([training.stop(), pipelines.stop()]);
        },
      };
    } catch (err) {
      worker.error(`worker: cannot start on ${redactUri(backend.backendStoreUri)} and ${backend.artifactsDestination}: ${(err as Error).message}`);
    }
    process.stdout.write(`platform-cloud worker running ${running.name}\n`);
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      running.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
