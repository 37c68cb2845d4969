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
import { Observed } from '../../core/serving/telemetry/metrics.js';

const trainingJobs = new Observed('platform_training_jobs', 'Training jobs known to the cloud, by status (PENDING, IN_PROGRESS, COMPLETED, …)', ['state']);

// A factory, not a module-level object: what start() opens belongs to this one cloud (see
// cloud/server/extension-contract.ts).
export function createMlTrainingExtension(): CloudExtension {
  let running: MLTraining | undefined;
  let unobserve: () => void = () => undefined;
  return {
    name: 'mltraining',
    async start(ctx) {
      const training = new MLTraining({
        ...trainingSettingsFromEnv(),
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
    },
  };
}
