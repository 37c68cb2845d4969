// The TypeScript data client: every operation of SPEC.md's upload, retrieval, delete/tag and dataset
// tables, with the camelCase names and TypeScript differences SPEC.md lists (resourceSubtype,
// binaryData, fileExtension, includeBinary, deleteOlderThanDays, query, ids). The uploads are in
// data-uploads.ts (DataClient extends DataUploads), the filter and option types in data-types.ts.
import type { ClientReadableStream } from '@grpc/grpc-js';
import { deserialize, serialize } from 'bson';
import { writeFile } from 'node:fs/promises';
import {
  DataServiceClient,
  Order,
  TabularDataSourceType,
  TagsFilterType,
  type BinaryID,
  type BinaryMetadata,
  type CaptureMetadata,
  type ExportTabularDataResponse,
} from '../../gen/platform/app/data/v1/data.js';
import {
  DatasetServiceClient,
  type Dataset,
  type DatasetSplit,
  type DatasetVersion,
  type DatasetVersionMember,
} from '../../gen/platform/app/dataset/v1/dataset.js';
import type { CloudConnection } from './connection.js';
import {
  exportDatasetTo,
  exportMcapTo,
  importDatasetFrom,
  type DatasetFormat,
  type DatasetFormatName,
  type ExportDatasetOptions,
  type ExportedDataset,
  type ImportedDataset,
} from './dataset-transfer.js';
import { ValueError } from './errors.js';
import { createFilter, type BinaryDataRecord, type FilterInput, type PageOptions, type TabularDataPoint } from './data-types.js';
import { DATA_CHANNEL_OPTIONS, DataUploads } from './data-uploads.js';

export * from './data-types.js';

export { Order, TabularDataSourceType, TagsFilterType };
export { DatasetFormat, type DatasetFormatName, type ExportDatasetOptions, type ExportedDataset, type ImportedDataset } from './dataset-transfer.js';
export type { BinaryID, BinaryMetadata, CaptureMetadata, Dataset, DatasetSplit, DatasetVersion, DatasetVersionMember };

async function writeDest(dest: string | undefined, value: unknown): Promise<void> {
  if (!dest) return;
  // JSON.stringify calls Buffer's toJSON before the replacer sees the value ({"type":"Buffer","data":[...]},
  // five times the size), so the replacer looks at the holder's original value instead.
  const json = JSON.stringify(
    value,
    function (this: Record<string, unknown>, key: string, v: unknown) {
      const original = this[key];
      if (original instanceof Uint8Array) return Buffer.from(original).toString('base64');
      return typeof v === 'bigint' ? v.toString() : v;
    },
    2,
  );
  await writeFile(dest, json);
}

const binaryIdsOf = (ids: (string | BinaryID)[]) => ({
  binaryDataIds: ids.filter((id): id is string => typeof id === 'string'),
  binaryIds: ids.filter((id): id is BinaryID => typeof id !== 'string'),
});

/** The uploads (data-uploads.ts), retrieval, deletion, tags and datasets. */
export class DataClient extends DataUploads {
  readonly dataService: DataServiceClient;
  readonly datasets: DatasetServiceClient;

  constructor(connection: CloudConnection) {
    super(connection);
    this.dataService = new DataServiceClient(connection.address, connection.channel, DATA_CHANNEL_OPTIONS);
    this.datasets = new DatasetServiceClient(connection.address, connection.channel, DATA_CHANNEL_OPTIONS);
  }

  // ---- retrieval ----

  async tabularDataByFilter(
    filter?: FilterInput,
    options: PageOptions = {},
  ): Promise<{ data: TabularDataPoint[]; count: number; last: string; totalSizeBytes: number }> {
    const res = await this.call<import('../../gen/platform/app/data/v1/data.js').TabularDataByFilterResponse>((md, cb) =>
      this.dataService.tabularDataByFilter(
        {
          dataRequest: {
            filter: createFilter(filter),
            limit: options.limit ?? 0,
            last: options.last ?? '',
            sortOrder: options.sortOrder ?? Order.ORDER_UNSPECIFIED,
          },
          countOnly: options.countOnly ?? false,
          includeInternalData: options.includeInternalData ?? false,
        },
        md,
        cb,
      ),
    );
    const data = res.data.map((d) => ({
      data: d.data ?? {},
      metadata: res.metadata[d.metadataIndex],
      timeRequested: d.timeRequested,
      timeReceived: d.timeReceived,
    }));
    const result = { data, count: res.count, last: res.last, totalSizeBytes: res.totalSizeBytes };
    await writeDest(options.dest, result);
    return result;
  }

  async tabularDataBySQL(organizationId: string, query: string): Promise<Record<string, unknown>[]> {
    const res = await this.call<{ rawData: Buffer[] }>((md, cb) => this.dataService.tabularDataBySql({ organizationId, sqlQuery: query }, md, cb));
    return res.rawData.map((bytes) => deserialize(bytes) as Record<string, unknown>);
  }

  /** query: aggregation stages, each a map (or raw BSON bytes, deprecated). */
  async tabularDataByMQL(
    organizationId: string,
    query: (Record<string, unknown> | Uint8Array)[],
    options: { useRecentData?: boolean; tabularDataSourceType?: TabularDataSourceType; pipelineId?: string } = {},
  ): Promise<Record<string, unknown>[]> {
    // Maps travel as Structs; raw BSON stages, or values a Struct cannot hold (dates, binary), as BSON.
    const asStructs = query.every((stage) => !(stage instanceof Uint8Array) && isJsonValue(stage));
    const stages = asStructs
      ? { query: query as Record<string, unknown>[], mqlBinary: [] }
      : { query: [], mqlBinary: query.map((stage) => (stage instanceof Uint8Array ? Buffer.from(stage) : Buffer.from(serialize(stage)))) };
    const type = options.tabularDataSourceType ?? TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD;
    const res = await this.call<{ rawData: Buffer[] }>((md, cb) =>
      this.dataService.tabularDataByMql(
        { organizationId, ...stages, useRecentData: options.useRecentData, dataSource: { type, pipelineId: options.pipelineId } },
        md,
        cb,
      ),
    );
    return res.rawData.map((bytes) => deserialize(bytes) as Record<string, unknown>);
  }

  async binaryDataByFilter(
    filter?: FilterInput,
    options: PageOptions & { includeBinary?: boolean } = {},
  ): Promise<{ data: BinaryDataRecord[]; count: number; last: string; totalSizeBytes: number }> {
    const res = await this.call<import('../../gen/platform/app/data/v1/data.js').BinaryDataByFilterResponse>((md, cb) =>
      this.dataService.binaryDataByFilter(
        {
          dataRequest: {
            filter: createFilter(filter),
            limit: options.limit ?? 0,
            last: options.last ?? '',
            sortOrder: options.sortOrder ?? Order.ORDER_UNSPECIFIED,
          },
          includeBinary: options.includeBinary ?? true,
          countOnly: options.countOnly ?? false,
          includeInternalData: options.includeInternalData ?? false,
        },
        md,
        cb,
      ),
    );
    const result = {
      data: res.data.map((d) => ({ binary: d.binary, metadata: d.metadata! })),
      count: res.count,
      last: res.last,
      totalSizeBytes: res.totalSizeBytes,
    };
    await writeDest(options.dest, result);
    return result;
  }

  async binaryDataByIds(ids: (string | BinaryID)[], options: { includeBinary?: boolean; dest?: string } = {}): Promise<BinaryDataRecord[]> {
    const res = await this.call<{ data: { binary: Buffer; metadata?: BinaryMetadata }[] }>((md, cb) =>
      this.dataService.binaryDataByIDs({ includeBinary: options.includeBinary ?? true, ...binaryIdsOf(ids) }, md, cb),
    );
    const data = res.data.map((d) => ({ binary: d.binary, metadata: d.metadata! }));
    await writeDest(options.dest, data);
    return data;
  }

  /** The newest point of a source synced in the last year, or null when there is none. */
  async getLatestTabularData(
    partId: string,
    resourceName: string,
    resourceSubtype: string,
    methodName: string,
  ): Promise<{ timeCaptured: Date; timeSynced: Date; payload: Record<string, unknown> } | null> {
    const res = await this.call<import('../../gen/platform/app/data/v1/data.js').GetLatestTabularDataResponse>((md, cb) =>
      this.dataService.getLatestTabularData({ partId, resourceName, resourceSubtype, methodName }, md, cb),
    );
    if (!res.found) return null;
    return { timeCaptured: res.timeCaptured!, timeSynced: res.timeSynced!, payload: res.payload ?? {} };
  }

  async exportTabularData(
    partId: string,
    resourceName: string,
    resourceSubtype: string,
    methodName: string,
    startTime?: Date,
    endTime?: Date,
  ): Promise<ExportTabularDataResponse[]> {
    const md = await this.connection.metadata();
    const stream: ClientReadableStream<ExportTabularDataResponse> = this.dataService.exportTabularData(
      { partId, resourceName, resourceSubtype, methodName, interval: startTime || endTime ? { start: startTime, end: endTime } : undefined },
      md,
    );
    const points: ExportTabularDataResponse[] = [];
    for await (const point of stream as AsyncIterable<ExportTabularDataResponse>) points.push(point);
    return points;
  }

  async getDatabaseConnection(organizationId: string): Promise<{ hostname: string; uri: string; hasDatabaseUser: boolean }> {
    return this.call((md, cb) => this.dataService.getDatabaseConnection({ organizationId }, md, cb));
  }

  async configureDatabaseUser(organizationId: string, password: string): Promise<void> {
    await this.call((md, cb) => this.dataService.configureDatabaseUser({ organizationId, password }, md, cb));
  }

  async boundingBoxLabelsByFilter(filter?: FilterInput): Promise<string[]> {
    return (await this.call<{ labels: string[] }>((md, cb) => this.dataService.boundingBoxLabelsByFilter({ filter: createFilter(filter) }, md, cb))).labels;
  }

  async tagsByFilter(filter?: FilterInput): Promise<string[]> {
    return (await this.call<{ tags: string[] }>((md, cb) => this.dataService.tagsByFilter({ filter: createFilter(filter) }, md, cb))).tags;
  }

  // ---- delete and tag ----

  /** Deletes the org's tabular data captured more than deleteOlderThanDays days ago; 0 deletes all. */
  async deleteTabularData(organizationId: string, deleteOlderThanDays: number): Promise<number> {
    if (!Number.isInteger(deleteOlderThanDays) || deleteOlderThanDays < 0) {
      throw new ValueError(`deleteOlderThanDays must be a non-negative integer, got ${deleteOlderThanDays}`);
    }
    return (await this.call<{ deletedCount: number }>((md, cb) => this.dataService.deleteTabularData({ organizationId, deleteOlderThanDays }, md, cb)))
      .deletedCount;
  }

  /** The filter must name at least one organization in organizationIds. */
  async deleteBinaryDataByFilter(filter?: FilterInput, includeInternalData = true): Promise<number> {
    return (
      await this.call<{ deletedCount: number }>((md, cb) =>
        this.dataService.deleteBinaryDataByFilter({ filter: createFilter(filter), includeInternalData }, md, cb),
      )
    ).deletedCount;
  }

  async deleteBinaryDataByIds(ids: (string | BinaryID)[]): Promise<number> {
    return (await this.call<{ deletedCount: number }>((md, cb) => this.dataService.deleteBinaryDataByIDs(binaryIdsOf(ids), md, cb))).deletedCount;
  }

  async addTagsToBinaryDataByIds(tags: string[], ids: (string | BinaryID)[]): Promise<void> {
    await this.call((md, cb) => this.dataService.addTagsToBinaryDataByIDs({ tags, ...binaryIdsOf(ids) }, md, cb));
  }

  async addTagsToBinaryDataByFilter(tags: string[], filter?: FilterInput): Promise<void> {
    await this.call((md, cb) => this.dataService.addTagsToBinaryDataByFilter({ tags, filter: createFilter(filter) }, md, cb));
  }

  /** Returns the number of binary data that lost a tag. */
  async removeTagsFromBinaryDataByIds(tags: string[], ids: (string | BinaryID)[]): Promise<number> {
    return (await this.call<{ deletedCount: number }>((md, cb) => this.dataService.removeTagsFromBinaryDataByIDs({ tags, ...binaryIdsOf(ids) }, md, cb)))
      .deletedCount;
  }

  async removeTagsFromBinaryDataByFilter(tags: string[], filter?: FilterInput): Promise<number> {
    return (
      await this.call<{ deletedCount: number }>((md, cb) => this.dataService.removeTagsFromBinaryDataByFilter({ tags, filter: createFilter(filter) }, md, cb))
    ).deletedCount;
  }

  async addBoundingBoxToImageById(
    binaryId: string | BinaryID,
    label: string,
    xMinNormalized: number,
    yMinNormalized: number,
    xMaxNormalized: number,
    yMaxNormalized: number,
  ): Promise<string> {
    const ids = typeof binaryId === 'string' ? { binaryDataId: binaryId } : { binaryDataId: '', binaryId };
    return (
      await this.call<{ bboxId: string }>((md, cb) =>
        this.dataService.addBoundingBoxToImageById({ ...ids, label, xMinNormalized, yMinNormalized, xMaxNormalized, yMaxNormalized }, md, cb),
      )
    ).bboxId;
  }

  async removeBoundingBoxFromImageById(binaryId: string | BinaryID, bboxId: string): Promise<void> {
    const ids = typeof binaryId === 'string' ? { binaryDataId: binaryId } : { binaryDataId: '', binaryId };
    await this.call((md, cb) => this.dataService.removeBoundingBoxFromImageById({ ...ids, bboxId }, md, cb));
  }

  // ---- datasets ----

  async createDataset(name: string, organizationId: string): Promise<string> {
    return (await this.call<{ id: string }>((md, cb) => this.datasets.createDataset({ name, organizationId }, md, cb))).id;
  }

  async deleteDataset(id: string): Promise<void> {
    await this.call((md, cb) => this.datasets.deleteDataset({ id }, md, cb));
  }

  async renameDataset(id: string, name: string): Promise<void> {
    await this.call((md, cb) => this.datasets.renameDataset({ id, name }, md, cb));
  }

  async listDatasetsByOrganizationID(organizationId: string): Promise<Dataset[]> {
    return (await this.call<{ datasets: Dataset[] }>((md, cb) => this.datasets.listDatasetsByOrganizationId({ organizationId }, md, cb))).datasets;
  }

  async listDatasetsByIds(ids: string[]): Promise<Dataset[]> {
    return (await this.call<{ datasets: Dataset[] }>((md, cb) => this.datasets.listDatasetsByIDs({ ids }, md, cb))).datasets;
  }

  /** Adds the data to the dataset: it gains the dataset id and the tag PLATFORM_DATASET_{id}. */
  async addBinaryDataToDatasetByIds(ids: string[], datasetId: string): Promise<void> {
    await this.call((md, cb) => this.datasets.addBinaryDataToDatasetByIDs({ binaryDataIds: ids, datasetId }, md, cb));
  }

  async removeBinaryDataFromDatasetByIds(ids: string[], datasetId: string): Promise<void> {
    await this.call((md, cb) => this.datasets.removeBinaryDataFromDatasetByIDs({ binaryDataIds: ids, datasetId }, md, cb));
  }

  /** Creates a dataset named `name` holding the union of the given datasets' data; returns its id. */
  async mergeDatasets(datasetIds: string[], name: string, organizationId: string): Promise<string> {
    return (await this.call<{ datasetId: string }>((md, cb) => this.datasets.mergeDatasets({ datasetIds, name, organizationId }, md, cb))).datasetId;
  }

  /**
   * Freezes the dataset's images, tags, boxes and a train/valid/test split (shares summing to 1, and a
   * seed; none: 0.7/0.2/0.1, seed 0) as its next version, which never changes.
   */
  async createDatasetVersion(datasetId: string, split?: Partial<DatasetSplit>): Promise<DatasetVersion> {
    const req = { datasetId, split: split ? { train: 0, valid: 0, test: 0, seed: 0, ...split } : undefined };
    return (await this.call<{ version?: DatasetVersion }>((md, cb) => this.datasets.createDatasetVersion(req, md, cb))).version!;
  }

  async listDatasetVersions(datasetId: string): Promise<DatasetVersion[]> {
    return (await this.call<{ versions: DatasetVersion[] }>((md, cb) => this.datasets.listDatasetVersions({ datasetId }, md, cb))).versions;
  }

  /** The version and its members (split, tags, boxes and pixel size of each image). */
  async getDatasetVersion(datasetId: string, version: number): Promise<{ version: DatasetVersion; members: DatasetVersionMember[] }> {
    const res = await this.call<{ version?: DatasetVersion; members: DatasetVersionMember[] }>((md, cb) =>
      this.datasets.getDatasetVersion({ datasetId, version }, md, cb),
    );
    return { version: res.version!, members: res.members };
  }

  /**
   * Exports a version (or the live dataset, version 0) as jsonl, coco or yolo: into the folder `dest`,
   * or as the zip itself when `dest` ends with .zip (cloud/dataset/README.md "Export").
   */
  async exportDataset(datasetId: string, dest: string, options: ExportDatasetOptions): Promise<ExportedDataset> {
    return exportDatasetTo(this.datasets, await this.connection.metadata(), datasetId, dest, options);
  }

  /**
   * Imports a COCO or YOLO dataset (a .zip, or a folder, zipped on the way) into the dataset: images
   * become binary data of `partId` in the dataset, categories become box labels. All or nothing.
   */
  async importDataset(datasetId: string, source: string, format: DatasetFormat | DatasetFormatName, partId: string): Promise<ImportedDataset> {
    return importDatasetFrom(this.datasets, await this.connection.metadata(), datasetId, source, format, partId);
  }

  /**
   * Writes the captured data the filter selects (readings, images, point clouds, and the logs of the
   * part or machine it names) to `dest` as one MCAP file for Foxglove or Lichtblick (cloud/README.md).
   */
  async exportMcap(filter: FilterInput | undefined, dest: string): Promise<{ path: string; bytes: number }> {
    return exportMcapTo(this.dataService, await this.connection.metadata(), createFilter(filter), dest);
  }

  close(): void {
    this.dataService.close();
    this.dataSync.close();
    this.datasets.close();
  }
}

/** True when a value survives a google.protobuf.Struct unchanged: plain JSON (no dates, buffers, undefined). */
function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value as object).every(isJsonValue);
  return false;
}
