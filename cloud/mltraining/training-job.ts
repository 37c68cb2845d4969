// A training job as the service keeps it (and persists it as JSON). Enum values are the proto names
// without their prefix, so the files read well and survive proto renumbering.
export type TrainingStatus = 'PENDING' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELED' | 'CANCELING';
export type ModelType = 'SINGLE_LABEL_CLASSIFICATION' | 'MULTI_LABEL_CLASSIFICATION' | 'OBJECT_DETECTION';
export type ModelFramework = 'TFLITE' | 'TENSORFLOW' | 'PYTORCH' | 'ONNX';

export const modelTypes: readonly ModelType[] = ['SINGLE_LABEL_CLASSIFICATION', 'MULTI_LABEL_CLASSIFICATION', 'OBJECT_DETECTION'];

export interface ErrorStatus {
  /** A gRPC status code (e.g. 4 DEADLINE_EXCEEDED for a timeout, 1 CANCELLED, 13 INTERNAL). */
  code: number;
  message: string;
}

export interface TrainingProgress {
  epoch: number;
  totalEpochs: number;
  loss: number;
  validationMetricName: string;
  validationMetric: number;
  imagesPerSecond: number;
}

export interface TrainingJob {
  id: string;
  organizationId: string;
  datasetId: string;
  /** The frozen dataset version the job trains on (cloud/dataset/dataset-versions.ts); absent: the live dataset. */
  datasetVersion?: number;
  modelName: string;
  modelVersion: string;
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  isCustomJob: boolean;
  registryItemId: string;
  registryItemVersion: string;
  status: TrainingStatus;
  errorStatus?: ErrorStatus;
  createdOn: string;
  lastModified: string;
  trainingStarted?: string;
  trainingEnded?: string;
  syncedModelId: string;
  tags: string[];
  arguments: Record<string, string>;
  progress?: TrainingProgress;
  validationMetrics: Record<string, number>;
  /** Process id (= process group id) of the running trainer, to end an orphan after a crash. */
  pid?: number;
}

export interface TrainingLogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  time: string;
  message: string;
}

const finished: ReadonlySet<TrainingStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELED']);

export const isFinished = (status: TrainingStatus): boolean => finished.has(status);
