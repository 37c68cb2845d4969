// A TypeScript client for DataPipelinesService, in the style of the cloud client: stages are plain maps
// (sent as BSON), times are Dates, and the access token comes from the cloud connection.
import { credentials as grpcCredentials, type ChannelCredentials, type Metadata, type ServiceError } from '@grpc/grpc-js';
import { deserialize, serialize } from 'bson';
import {
  DataPipelineRunStatus,
  DataPipelinesServiceClient,
  type DataPipeline as DataPipelineMessage,
  type DataPipelineRun,
} from '../../../gen/platform/app/data/v1/data_pipelines.js';
import { TabularDataSourceType } from '../../../gen/platform/app/data/v1/data.js';

export { DataPipelineRunStatus, TabularDataSourceType };
export type { DataPipelineRun };

export interface DataPipeline extends Omit<DataPipelineMessage, 'mqlBinary'> {
  /** The aggregation stages. */
  query: Record<string, unknown>[];
}

type Callback<T> = (err: ServiceError | null, value?: T) => void;

export class DataPipelinesClient {
  private readonly rpc: DataPipelinesServiceClient;

  /** `connection` is a CloudConnection (cloud/client) or anything with the same address and metadata(). */
  constructor(connection: { address: string; channel?: ChannelCredentials; metadata(): Promise<Metadata> }) {
    this.rpc = new DataPipelinesServiceClient(connection.address, connection.channel ?? grpcCredentials.createInsecure());
    this.metadata = () => connection.metadata();
  }

  private readonly metadata: () => Promise<Metadata>;

  private async call<T>(start: (md: Metadata, cb: Callback<T>) => unknown): Promise<T> {
    const md = await this.metadata();
    return new Promise<T>((resolve, reject) => start(md, (err, value) => (err ? reject(err) : resolve(value as T))));
  }

  /** Creates a pipeline that runs `query` on `schedule` (5-field cron, UTC); returns its id. */
  async createDataPipeline(
    organizationId: string,
    name: string,
    query: Record<string, unknown>[],
    schedule: string,
    options: { dataSourceType?: TabularDataSourceType } = {},
  ): Promise<string> {
    const mqlBinary = query.map((stage) => Buffer.from(serialize(stage)));
    const res = await this.call<{ id: string }>((md, cb) =>
      this.rpc.createDataPipeline({ organizationId, name, mqlBinary, schedule, dataSourceType: options.dataSourceType }, md, cb),
    );
    return res.id;
  }

  async getDataPipeline(id: string): Promise<DataPipeline> {
    const res = await this.call<{ dataPipeline?: DataPipelineMessage }>((md, cb) => this.rpc.getDataPipeline({ id }, md, cb));
    return toPipeline(res.dataPipeline!);
  }

  async listDataPipelines(organizationId: string): Promise<DataPipeline[]> {
    const res = await this.call<{ dataPipelines: DataPipelineMessage[] }>((md, cb) => this.rpc.listDataPipelines({ organizationId }, md, cb));
    return res.dataPipelines.map(toPipeline);
  }

  async enableDataPipeline(id: string): Promise<void> {
    await this.call((md, cb) => this.rpc.enableDataPipeline({ id }, md, cb));
  }

  async disableDataPipeline(id: string): Promise<void> {
    await this.call((md, cb) => this.rpc.disableDataPipeline({ id }, md, cb));
  }

  async deleteDataPipeline(id: string): Promise<void> {
    await this.call((md, cb) => this.rpc.deleteDataPipeline({ id }, md, cb));
  }

  /** The pipeline's runs, newest window first. */
  async listDataPipelineRuns(id: string): Promise<DataPipelineRun[]> {
    const res = await this.call<{ runs: DataPipelineRun[] }>((md, cb) => this.rpc.listDataPipelineRuns({ id }, md, cb));
    return res.runs;
  }

  close(): void {
    this.rpc.close();
  }
}

function toPipeline(m: DataPipelineMessage): DataPipeline {
  const { mqlBinary, ...rest } = m;
  return { ...rest, query: mqlBinary.map((b) => deserialize(b) as Record<string, unknown>) };
}
