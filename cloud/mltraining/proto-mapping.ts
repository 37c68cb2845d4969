// Between the core's records (enum names without prefix, ISO times) and the generated proto types.
import {
  ModelFramework as PbFramework,
  ModelType as PbModelType,
  TrainingStatus as PbStatus,
  type ModelArtefact as PbArtefact,
  type TrainingJobMetadata,
  type TrainingScript as PbScript,
} from '../../gen/platform/app/mltraining/v1/ml_training.js';
import { invalidArgument } from '../../core/serving/status-error.js';
import type { ModelArtefact } from './model-artefacts.js';
import type { TrainingScript } from './script-registry.js';
import type { ModelFramework, ModelType, TrainingJob, TrainingStatus } from './training-job.js';

const date = (iso?: string) => (iso ? new Date(iso) : undefined);

export function statusToProto(status: TrainingStatus): PbStatus {
  return PbStatus[`TRAINING_STATUS_${status}`];
}

/** UNSPECIFIED (all jobs) becomes undefined. */
export function statusFromProto(status: PbStatus): TrainingStatus | undefined {
  if (status === PbStatus.TRAINING_STATUS_UNSPECIFIED) return undefined;
  const name = PbStatus[status];
  if (!name || status === PbStatus.UNRECOGNIZED) throw invalidArgument(`status ${status} is not a TrainingStatus`);
  return name.replace('TRAINING_STATUS_', '') as TrainingStatus;
}

export function modelTypeToProto(type?: ModelType): PbModelType {
  return type ? PbModelType[`MODEL_TYPE_${type}`] : PbModelType.MODEL_TYPE_UNSPECIFIED;
}

export function modelTypeFromProto(type: PbModelType, field = 'model_type'): ModelType | undefined {
  if (type === PbModelType.MODEL_TYPE_UNSPECIFIED) return undefined;
  const name = PbModelType[type];
  if (!name || type === PbModelType.UNRECOGNIZED) throw invalidArgument(`${field} ${type} is not a ModelType`);
  return name.replace('MODEL_TYPE_', '') as ModelType;
}

export function frameworkToProto(framework?: ModelFramework): PbFramework {
  return framework ? PbFramework[`MODEL_FRAMEWORK_${framework}`] : PbFramework.MODEL_FRAMEWORK_UNSPECIFIED;
}

export function frameworkFromProto(framework: PbFramework): ModelFramework | undefined {
  if (framework === PbFramework.MODEL_FRAMEWORK_UNSPECIFIED) return undefined;
  const name = PbFramework[framework];
  if (!name || framework === PbFramework.UNRECOGNIZED) throw invalidArgument(`model_framework ${framework} is not a ModelFramework`);
  return name.replace('MODEL_FRAMEWORK_', '') as ModelFramework;
}

export function jobToProto(job: TrainingJob): TrainingJobMetadata {
  return {
    id: job.id,
    datasetId: job.datasetId,
    datasetVersion: job.datasetVersion ?? 0,
    organizationId: job.organizationId,
    modelName: job.modelName,
    modelVersion: job.modelVersion,
    modelType: modelTypeToProto(job.modelType),
    modelFramework: frameworkToProto(job.modelFramework),
    isCustomJob: job.isCustomJob,
    registryItemId: job.registryItemId,
    registryItemVersion: job.registryItemVersion,
    status: statusToProto(job.status),
    errorStatus: job.errorStatus,
    createdOn: date(job.createdOn),
    lastModified: date(job.lastModified),
    trainingStarted: date(job.trainingStarted),
    trainingEnded: date(job.trainingEnded),
    syncedModelId: job.syncedModelId,
    tags: job.tags,
    arguments: job.arguments,
    progress: job.progress,
    validationMetrics: job.validationMetrics,
  };
}

export function scriptToProto(script: TrainingScript): PbScript {
  return {
    organizationId: script.organizationId,
    registryItemId: script.registryItemId,
    version: script.version,
    entrypoint: script.entrypoint,
    modelType: modelTypeToProto(script.modelType),
    modelFramework: frameworkToProto(script.modelFramework),
    description: script.description,
    packageSizeBytes: script.packageSizeBytes,
    createdOn: date(script.createdOn),
  };
}

export function artefactToProto(artefact: ModelArtefact): PbArtefact {
  return {
    id: artefact.id,
    organizationId: artefact.organizationId,
    modelName: artefact.modelName,
    modelVersion: artefact.modelVersion,
    modelType: modelTypeToProto(artefact.modelType),
    modelFramework: frameworkToProto(artefact.modelFramework),
    trainingJobId: artefact.trainingJobId,
    files: artefact.files,
    labels: artefact.labels,
    validationMetrics: artefact.validationMetrics,
    createdOn: date(artefact.createdOn),
  };
}
