// `platform-cloud worker` (issue 33's scale-out mode): runs training jobs taken from the pg-boss queue in
// the cloud's PostgreSQL (cloud/mltraining/worker-process.ts), with the stores' flags of `serve`
// (backend-options.ts), both required: a worker has no embedded mode, its jobs come from the database
// that the serve processes share. Prints "platform-cloud worker running <name>" once it takes jobs;
// SIGTERM or SIGINT hands its running jobs back to the queue (another worker runs them) and exits.
import { Option, type Command } from 'commander';
import { pino } from 'pino';
import type { RunningTrainingWorker } from '../mltraining/worker-process.js';
import { backendOptions, redactUri, resolveBackend } from './backend-options.js';

export function addWorkerCommand(program: Command, defaultDataDir: string): void {
  const worker: Command = program
    .command('worker')
    .description('scale-out mode: run training jobs from the queue in --backend-store-uri; prints "platform-cloud worker running <name>" when ready')
    .addOption(new Option('--data-dir <dir>', 'scratch space of the jobs run here (nothing durable)').default(defaultDataDir));
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
    let running: RunningTrainingWorker;
    try {
      // Loaded here: the queue (pg-boss) and the AWS SDK cost the other commands nothing.
      const { runTrainingWorker } = await import('../mltraining/worker-process.js');
      running = await runTrainingWorker({
        backendStoreUri: backend.backendStoreUri,
        artifactsDestination: backend.artifactsDestination,
        s3Endpoint: backend.s3Endpoint,
        dataDir: opts.dataDir,
        logger,
      });
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
