// platform.app.mltraining.v1.MLTrainingService over the MLTraining core. Every call first checks for an
// organization-level owner key; jobs of another organization answer NOT_FOUND, as if absent.
import type { Metadata, Server } from '@grpc/grpc-js';
import { MLTrainingServiceService, type MLTrainingServiceServer } from '../../gen/platform/app/mltraining/v1/ml_training.js';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { serverStream, unary } from '../kit/handlers.js';
import { writeStream } from '../kit/stream-write.js';
import { checkOrganizationId, type MLTraining } from './ml-training.js';
import { artefactToProto, frameworkFromProto, jobToProto, modelTypeFromProto, scriptToProto, statusFromProto } from './proto-mapping.js';
import type { TrainingAuth } from './training-auth.js';
import type { TrainingJob } from './training-job.js';

const chunkBytes = 256 * 1024;

export function mlTrainingHandlers(training: MLTraining, auth: TrainingAuth): MLTrainingServiceServer {
  const orgOf = async (metadata: Metadata, organizationId: string) => {
    checkOrganizationId(organizationId);
    return auth.requireOwner(metadata, organizationId);
  };
  /** The job, when the caller owns its organization. */
  const ownJob = async (metadata: Metadata, id: string): Promise<TrainingJob> => {
    if (!id) throw invalidArgument('id is required');
    const org = await auth.requireOwner(metadata);
    const job = await training.getTrainingJob(id);
    if (job.organizationId !== org) throw notFound(`no training job with id ${id}`);
    return job;
  };

  return {
    submitTrainingJob: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      const modelType = modelTypeFromProto(req.modelType);
      if (!modelType)
        throw invalidArgument(
          'model_type is required (MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, MODEL_TYPE_MULTI_LABEL_CLASSIFICATION or MODEL_TYPE_OBJECT_DETECTION)',
        );
      const id = await training.submitTrainingJob({ ...req, modelType, arguments: req.arguments });
      return { id };
    }),
    submitCustomTrainingJob: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      return { id: await training.submitCustomTrainingJob(req) };
    }),
    getTrainingJob: unary(async (req, md) => ({ metadata: jobToProto(await ownJob(md, req.id)) })),
    listTrainingJobs: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      return { jobs: (await training.listTrainingJobs(req.organizationId, statusFromProto(req.status))).map(jobToProto) };
    }),
    cancelTrainingJob: unary(async (req, md) => {
      await training.cancelTrainingJob((await ownJob(md, req.id)).id);
      return {};
    }),
    deleteCompletedTrainingJob: unary(async (req, md) => {
      await training.deleteCompletedTrainingJob((await ownJob(md, req.id)).id);
      return {};
    }),
    getTrainingJobLogs: unary(async (req, md) => {
      const page = await training.getTrainingJobLogs((await ownJob(md, req.id)).id, req.pageToken);
      return {
        logs: page.logs.map((l) => ({ level: l.level, time: new Date(l.time), message: l.message })),
        nextPageToken: page.nextPageToken,
        resumePageToken: page.resumePageToken,
      };
    }),
    uploadTrainingScript: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      const script = await training.registry.upload({
        organizationId: req.organizationId,
        registryItemId: req.registryItemId,
        version: req.version,
        entrypoint: req.entrypoint,
        package: req.package,
        modelType: modelTypeFromProto(req.modelType),
        modelFramework: frameworkFromProto(req.modelFramework),
        description: req.description,
      });
      return { script: scriptToProto(script) };
    }),
    listTrainingScripts: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      return { scripts: (await training.registry.list(req.organizationId, req.registryItemId || undefined)).map(scriptToProto) };
    }),
    deleteTrainingScript: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      await training.deleteTrainingScript(req.organizationId, req.registryItemId, req.version);
      return {};
    }),
    listModelArtefacts: unary(async (req, md) => {
      await orgOf(md, req.organizationId);
      return { artefacts: (await training.artefacts.list(req.organizationId, req.modelName || undefined)).map(artefactToProto) };
    }),
    downloadModelArtefact: serverStream(async (call) => {
      const req = call.request;
      await orgOf(call.metadata, req.organizationId);
      if (!req.modelName) throw invalidArgument('model_name is required');
      if (!req.modelVersion) throw invalidArgument('model_version is required');
      if (!req.fileName) throw invalidArgument('file_name is required');
      const content = await training.artefacts.openFile(req.organizationId, req.modelName, req.modelVersion, req.fileName);
      await writeStream(call, content, (chunk) => ({ chunk }), chunkBytes);
    }),
  };
}

export function addMLTrainingService(server: Server, training: MLTraining, auth: TrainingAuth): void {
  server.addService(MLTrainingServiceService, mlTrainingHandlers(training, auth));
}
