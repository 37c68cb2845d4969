// The TypeScript ML training client (SPEC "ML training operations", camelCase names). It sends the
// cloud access token on every call through `metadata()`, which the connection supplies.
import { credentials as grpcCredentials, type ChannelCredentials, type ClientOptions, type Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  MLTrainingServiceClient,
  ModelType,
  TrainingStatus,
  type ModelArtefact,
  type ModelFramework,
  type CancelTrainingJobResponse,
  type DeleteCompletedTrainingJobResponse,
  type DeleteTrainingScriptResponse,
  type GetTrainingJobResponse,
  type GetTrainingJobLogsResponse,
  type ListModelArtefactsResponse,
  type ListTrainingJobsResponse,
  type ListTrainingScriptsResponse,
  type SubmitCustomTrainingJobResponse,
  type SubmitTrainingJobResponse,
  type UploadTrainingScriptResponse,
  type TrainingJobLogEntry,
  type TrainingJobMetadata,
  type TrainingScript,
} from '../../gen/platform/app/mltraining/v1/ml_training.js';

export { ModelFramework, ModelType, TrainingStatus } from '../../gen/platform/app/mltraining/v1/ml_training.js';
export type { ModelArtefact, TrainingJobLogEntry, TrainingJobMetadata, TrainingScript } from '../../gen/platform/app/mltraining/v1/ml_training.js';

/** Supplies the call metadata (authorization: Bearer <token>) of each call. */
export type MetadataSource = () => Promise<Metadata> | Metadata;

type Callback<T> = (err: ServiceError | null, value: T) => void;

export interface UploadTrainingScriptOptions {
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  description?: string;
}

export class MLTrainingClient {
  readonly rpc: MLTrainingServiceClient;

  constructor(
    address: string,
    private readonly metadata: MetadataSource,
    credentials: ChannelCredentials = grpcCredentials.createInsecure(),
    options: ClientOptions = {},
  ) {
    this.rpc = new MLTrainingServiceClient(address, credentials, {
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.max_send_message_length': 64 * 1024 * 1024,
      ...options,
    });
  }

  private async call<Res>(start: (md: Metadata, cb: Callback<Res>) => unknown): Promise<Res> {
    const md = await this.metadata();
    return new Promise((resolve, reject) => {
      start(md, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }

  /**
   * Queues a built-in training job; returns its id. `args` tune the trainer (epochs, batch_size, ...).
   * `datasetVersion` names a frozen version of the dataset; 0 (the default) makes a version for the job.
   */
  async submitTrainingJob(
    organizationId: string,
    datasetId: string,
    modelName: string,
    modelVersion: string,
    modelType: ModelType,
    tags: string[],
    args: Record<string, string> = {},
    datasetVersion = 0,
  ): Promise<string> {
    const res = await this.call((md, cb: Callback<SubmitTrainingJobResponse>) =>
      this.rpc.submitTrainingJob({ organizationId, datasetId, datasetVersion, modelName, modelVersion, modelType, tags, arguments: args }, md, cb),
    );
    return res.id;
  }

  /** Queues a job that runs a registry training script; `args` reach it as --key=value. `datasetVersion` as for submitTrainingJob. */
  async submitCustomTrainingJob(
    organizationId: string,
    datasetId: string,
    registryItemId: string,
    registryItemVersion: string,
    modelName: string,
    modelVersion: string,
    args: Record<string, string> = {},
    datasetVersion = 0,
  ): Promise<string> {
    const res = await this.call((md, cb: Callback<SubmitCustomTrainingJobResponse>) =>
      this.rpc.submitCustomTrainingJob(
        {
          organizationId,
          datasetId,
          datasetVersion,
          registryItemId,
          registryItemVersion,
          modelName,
          modelVersion,
          arguments: args,
        },
        md,
        cb,
      ),
    );
    return res.id;
  }

  async getTrainingJob(id: string): Promise<TrainingJobMetadata> {
    const res = await this.call((md, cb: Callback<GetTrainingJobResponse>) => this.rpc.getTrainingJob({ id }, md, cb));
    return res.metadata!;
  }

  /** Lists the organization's jobs with that status; TrainingStatus.TRAINING_STATUS_UNSPECIFIED lists all. */
  async listTrainingJobs(organizationId: string, status: TrainingStatus): Promise<TrainingJobMetadata[]> {
    return (await this.call((md, cb: Callback<ListTrainingJobsResponse>) => this.rpc.listTrainingJobs({ organizationId, status }, md, cb))).jobs;
  }

  async cancelTrainingJob(id: string): Promise<void> {
    await this.call((md, cb: Callback<CancelTrainingJobResponse>) => this.rpc.cancelTrainingJob({ id }, md, cb));
  }

  async deleteCompletedTrainingJob(id: string): Promise<void> {
    await this.call((md, cb: Callback<DeleteCompletedTrainingJobResponse>) => this.rpc.deleteCompletedTrainingJob({ id }, md, cb));
  }

  /**
   * One page of a job's log; pass nextPageToken back for the next one ('' = no entry left now). To follow
   * a running job, pass resumePageToken back later: only the entries appended since come back.
   */
  async getTrainingJobLogs(id: string, pageToken = ''): Promise<{ logs: TrainingJobLogEntry[]; nextPageToken: string; resumePageToken: string }> {
    return this.call((md, cb: Callback<GetTrainingJobLogsResponse>) => this.rpc.getTrainingJobLogs({ id, pageToken }, md, cb));
  }

  /** Uploads a training script package (tar or tar.gz) to the registry as registryItemId@version. */
  async uploadTrainingScript(
    organizationId: string,
    registryItemId: string,
    version: string,
    entrypoint: string,
    pkg: Uint8Array,
    options: UploadTrainingScriptOptions = {},
  ): Promise<TrainingScript> {
    const res = await this.call((md, cb: Callback<UploadTrainingScriptResponse>) =>
      this.rpc.uploadTrainingScript(
        {
          organizationId,
          registryItemId,
          version,
          entrypoint,
          package: Buffer.from(pkg),
          modelType: options.modelType ?? ModelType.MODEL_TYPE_UNSPECIFIED,
          modelFramework: options.modelFramework ?? 0,
          description: options.description ?? '',
        },
        md,
        cb,
      ),
    );
    return res.script!;
  }

  async listTrainingScripts(organizationId: string, registryItemId = ''): Promise<TrainingScript[]> {
    return (await this.call((md, cb: Callback<ListTrainingScriptsResponse>) => this.rpc.listTrainingScripts({ organizationId, registryItemId }, md, cb)))
      .scripts;
  }

  /** Deletes one version of a training script (FAILED_PRECONDITION while a pending job needs it). */
  async deleteTrainingScript(organizationId: string, registryItemId: string, version: string): Promise<void> {
    await this.call((md, cb: Callback<DeleteTrainingScriptResponse>) => this.rpc.deleteTrainingScript({ organizationId, registryItemId, version }, md, cb));
  }

  async listModelArtefacts(organizationId: string, modelName = ''): Promise<ModelArtefact[]> {
    return (await this.call((md, cb: Callback<ListModelArtefactsResponse>) => this.rpc.listModelArtefacts({ organizationId, modelName }, md, cb))).artefacts;
  }

  /** Downloads one file of a model artefact (e.g. model.onnx, labels.txt). */
  async downloadModelArtefact(organizationId: string, modelName: string, modelVersion: string, fileName: string): Promise<Buffer> {
    const md = await this.metadata();
    const stream = this.rpc.downloadModelArtefact({ organizationId, modelName, modelVersion, fileName }, md);
    const chunks: Buffer[] = [];
    for await (const message of stream) chunks.push(Buffer.from((message as { chunk: Uint8Array }).chunk));
    return Buffer.concat(chunks);
  }

  close(): void {
    this.rpc.close();
  }
}
