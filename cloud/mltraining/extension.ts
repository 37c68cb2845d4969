// Plugs the ML training service into platform-cloud: the gRPC services in `serve`, and the `worker`
// subcommand of the scale-out mode (worker-process.ts). Settings: training-settings.ts.
import { join } from 'node:path';
import type { CloudExtension } from '../kit/extension-contract.js';
import { CloudTrainingDataSource } from './cloud-data-source.js';
import { MLTraining } from './ml-training.js';
import { addMLTrainingService } from './ml-training-service.js';
import { addPackageService, authorizerPackageAuth } from './package-service.js';
import { authorizerTrainingAuth } from './training-auth.js';
import { trainingSettingsFromEnv } from './training-settings.js';
import type { PgStore } from '../store/pg-store.js';
import type PgBoss from 'pg-boss';
import type { TrainingDispatch } from './ml-training.js';
import { Observed } from '../../core/serving/telemetry/metrics.js';

const trainingJobs = new Observed('platform_training_jobs', 'Training jobs known to the cloud, by status (PENDING, IN_PROGRESS, COMPLETED, …)', ['state']);

// A factory, not a module-level object: what start() opens belongs to this one cloud (see
// cloud/server/extension-contract.ts).
export function createMlTrainingExtension(): CloudExtension {
  let running: MLTraining | undefined;
  let boss: PgBoss | undefined;
  let unobserve: () => void = () => undefined;
  return {
    name: 'mltraining',
    async start(ctx) {
      // The scale-out mode: jobs go to the pg-boss queue in the same PostgreSQL, and `platform-cloud
      // worker` processes run them (worker.ts); the embedded default runs them in this process.
      // pg-boss is loaded only then.
      let dispatch: TrainingDispatch | undefined;
      if (ctx.tables.dialect === 'postgres') {
        const { BossTrainingDispatch, openBoss } = await import('./worker-queue.js');
        const logger = ctx.logger.child({ extension: 'mltraining' });
        boss = await openBoss((ctx.tables as unknown as PgStore).url, {
          supervise: false,
          onError: (err) => logger.warn({ err: err.message }, 'training queue error'),
        });
        dispatch = new BossTrainingDispatch(boss);
      }
      const training = new MLTraining({
        ...trainingSettingsFromEnv(),
        dispatch,
        runsNoJobs: dispatch !== undefined,
        root: join(ctx.dataDir, 'mltraining'),
        store: ctx.tables,
        dataSource: new CloudTrainingDataSource(ctx.tables),
        logger: ctx.logger.child({ extension: 'mltraining' }),
      });
      await training.start();
      addMLTrainingService(ctx.server, training, authorizerTrainingAuth(ctx.authorizer));
      // The artefacts are also the ml_model packages that machines download (package-service.ts).
      addPackageService(ctx.server, training.artefacts, authorizerPackageAuth(ctx.authorizer));
      running = training;
      unobserve = trainingJobs.observe(() => [...training.jobCountsByStatus()].map(([state, n]) => [{ state }, n] as const));
    },
    async stop() {
      unobserve();
      await running?.stop();
      running = undefined;
      await boss?.stop({ graceful: false, wait: true });
      boss = undefined;
    },
  };
}
