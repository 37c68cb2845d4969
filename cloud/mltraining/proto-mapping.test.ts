import { status } from '@grpc/grpc-js';
import test from 'ava';
import { ModelFramework, ModelType, TrainingStatus } from '../../gen/platform/app/mltraining/v1/ml_training.js';
import { frameworkFromProto, jobToProto, modelTypeFromProto, statusFromProto, statusToProto } from './proto-mapping.js';
import type { TrainingStatus as CoreStatus } from './training-job.js';

test('every status maps both ways; UNSPECIFIED means all; unknown numbers are refused', (t) => {
  const all: CoreStatus[] = ['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELED', 'CANCELING'];
  for (const s of all) t.is(statusFromProto(statusToProto(s)), s);
  t.is(statusToProto('CANCELING'), TrainingStatus.TRAINING_STATUS_CANCELING);
  t.is(statusFromProto(TrainingStatus.TRAINING_STATUS_UNSPECIFIED), undefined);
  const err = t.throws(() => statusFromProto(42 as TrainingStatus));
  t.is((err as { code?: number }).code, status.INVALID_ARGUMENT);
  t.throws(() => statusFromProto(TrainingStatus.UNRECOGNIZED), { message: /not a TrainingStatus/ });
});

test('model types and frameworks map by name', (t) => {
  t.is(modelTypeFromProto(ModelType.MODEL_TYPE_OBJECT_DETECTION), 'OBJECT_DETECTION');
  t.is(modelTypeFromProto(ModelType.MODEL_TYPE_UNSPECIFIED), undefined);
  t.throws(() => modelTypeFromProto(9 as ModelType), { message: /model_type 9 is not a ModelType/ });
  t.is(frameworkFromProto(ModelFramework.MODEL_FRAMEWORK_TFLITE), 'TFLITE');
  t.throws(() => frameworkFromProto(7 as ModelFramework), { message: /model_framework 7/ });
});

test('job metadata carries every field of FACTS.md', (t) => {
  const pb = jobToProto({
    id: 'j',
    organizationId: 'o',
    datasetId: 'd',
    modelName: 'm',
    modelVersion: 'v',
    modelType: 'MULTI_LABEL_CLASSIFICATION',
    modelFramework: 'ONNX',
    isCustomJob: false,
    registryItemId: '',
    registryItemVersion: '',
    status: 'FAILED',
    errorStatus: { code: 13, message: 'boom' },
    createdOn: '2024-01-01T00:00:00.000Z',
    lastModified: '2024-01-01T00:01:00.000Z',
    trainingStarted: '2024-01-01T00:00:10.000Z',
    trainingEnded: '2024-01-01T00:01:00.000Z',
    syncedModelId: '',
    tags: ['a'],
    arguments: { epochs: '3' },
    validationMetrics: { exact_match: 0.5 },
  });
  t.like(pb, {
    id: 'j',
    organizationId: 'o',
    datasetId: 'd',
    modelName: 'm',
    modelVersion: 'v',
    modelType: ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION,
    modelFramework: ModelFramework.MODEL_FRAMEWORK_ONNX,
    isCustomJob: false,
    status: TrainingStatus.TRAINING_STATUS_FAILED,
    errorStatus: { code: 13, message: 'boom' },
    tags: ['a'],
    arguments: { epochs: '3' },
    validationMetrics: { exact_match: 0.5 },
  });
  t.deepEqual(pb.trainingStarted, new Date('2024-01-01T00:00:10.000Z'));
  t.deepEqual(pb.createdOn, new Date('2024-01-01T00:00:00.000Z'));
});
