// The data client's uploads (SPEC.md's upload table): binary and tabular captures, files (from memory or
// a path) and streaming uploads, through DataSyncService. DataClient extends this with retrieval,
// deletion, tags and datasets.
import { makeGenericClientConstructor, type Metadata, type ServiceError } from '@grpc/grpc-js';
import { access, readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { DataSyncServiceClient, DataSyncServiceService, DataType, type UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { encodeDataCaptureUploadRequest } from '../datasync/struct-codec.js';
import type { CloudConnection } from './connection.js';
import { uploadChunkBytes, type FileUploadOptions, type StreamingUploadOptions, type UploadOptions } from './data-types.js';
import { FileNotFoundError, ValueError } from './errors.js';

export type Callback<T> = (err: ServiceError | null, value?: T) => void;

/** Message size limits of the data client's channels. */
export const DATA_CHANNEL_OPTIONS = { 'grpc.max_receive_message_length': 256 * 1024 * 1024, 'grpc.max_send_message_length': 64 * 1024 * 1024 };

/**
 * The generated DataSyncService client with the direct encoder for DataCaptureUpload: the generated
 * one wraps every value of every point's Struct in objects first and takes twice as long.
 */
const DataSyncClient = makeGenericClientConstructor(
  {
    ...DataSyncServiceService,
    dataCaptureUpload: { ...DataSyncServiceService.dataCaptureUpload, requestSerialize: encodeDataCaptureUploadRequest },
  },
  'platform.app.datasync.v1.DataSyncService',
) as unknown as typeof DataSyncServiceClient;

export class DataUploads {
  readonly dataSync: DataSyncServiceClient;

  constructor(protected readonly connection: CloudConnection) {
    this.dataSync = new DataSyncClient(connection.address, connection.channel, DATA_CHANNEL_OPTIONS);
  }

  protected async call<T>(start: (md: Metadata, cb: Callback<T>) => unknown): Promise<T> {
    const md = await this.connection.metadata();
    return new Promise((resolve, reject) => start(md, (err, res) => (err ? reject(err) : resolve(res as T))));
  }

  async binaryDataCaptureUpload(
    binaryData: Uint8Array,
    partId: string,
    componentType: string,
    componentName: string,
    methodName: string,
    fileExtension: string,
    dataRequestTimes: [Date, Date],
    tags: string[] = [],
    options: UploadOptions = {},
  ): Promise<string> {
    if (!dataRequestTimes || dataRequestTimes.length !== 2) throw new ValueError('dataRequestTimes must be a pair [requested, received]');
    const metadata: UploadMetadata = {
      partId,
      componentType,
      componentName,
      methodName,
      type: DataType.DATA_TYPE_BINARY_SENSOR,
      fileName: '',
      methodParameters: options.methodParameters,
      fileExtension,
      tags,
      datasetIds: options.datasetIds ?? [],
      mimeType: '',
      uploadId: options.uploadId ?? '',
    };
    const res = await this.call<{ binaryDataId: string }>((md, cb) =>
      this.dataSync.dataCaptureUpload(
        {
          metadata,
          sensorContents: [
            { metadata: { timeRequested: dataRequestTimes[0], timeReceived: dataRequestTimes[1], mimeType: '' }, binary: Buffer.from(binaryData) },
          ],
        },
        md,
        cb,
      ),
    );
    return res.binaryDataId;
  }

  /** Uploads n points sharing one metadata; dataRequestTimes must hold one [requested, received] pair per point. */
  async tabularDataCaptureUpload(
    tabularData: Record<string, unknown>[],
    partId: string,
    componentType: string,
    componentName: string,
    methodName: string,
    dataRequestTimes: [Date, Date][],
    tags: string[] = [],
    options: UploadOptions = {},
  ): Promise<string> {
    if (!dataRequestTimes || dataRequestTimes.length !== tabularData.length) {
      throw new ValueError(
        `dataRequestTimes has ${dataRequestTimes?.length ?? 0} timestamp pairs but tabularData has ${tabularData.length} items; they must be equal`,
      );
    }
    const metadata: UploadMetadata = {
      partId,
      componentType,
      componentName,
      methodName,
      type: DataType.DATA_TYPE_TABULAR_SENSOR,
      fileName: '',
      methodParameters: options.methodParameters,
      fileExtension: '',
      tags,
      datasetIds: options.datasetIds ?? [],
      mimeType: '',
      uploadId: options.uploadId ?? '',
    };
    const sensorContents = tabularData.map((item, i) => ({
      metadata: { timeRequested: dataRequestTimes[i][0], timeReceived: dataRequestTimes[i][1], mimeType: '' },
      struct: item,
    }));
    const res = await this.call<{ fileId: string }>((md, cb) => this.dataSync.dataCaptureUpload({ metadata, sensorContents }, md, cb));
    return res.fileId;
  }

  async fileUpload(data: Uint8Array, partId: string, options: FileUploadOptions = {}): Promise<string> {
    const md = await this.connection.metadata();
    const metadata: UploadMetadata = {
      partId,
      componentType: options.componentType ?? '',
      componentName: options.componentName ?? '',
      methodName: options.methodName ?? '',
      type: DataType.DATA_TYPE_FILE,
      fileName: options.fileName ?? '',
      methodParameters: options.methodParameters,
      fileExtension: options.fileExtension ?? '',
      tags: options.tags ?? [],
      datasetIds: options.datasetIds ?? [],
      mimeType: '',
      uploadId: options.uploadId ?? '',
    };
    return new Promise<string>((resolve, reject) => {
      const stream = this.dataSync.fileUpload(md, (err, res) => (err ? reject(err) : resolve(res!.binaryDataId)));
      stream.write({ metadata });
      for (let offset = 0; offset < data.byteLength; offset += uploadChunkBytes) {
        stream.write({ fileContents: { data: Buffer.from(data.subarray(offset, offset + uploadChunkBytes)) } });
      }
      stream.end();
    });
  }

  /** Uploads a file from disk; raises FileNotFoundError (before any call) when the path does not exist. */
  async fileUploadFromPath(filepath: string, partId: string, options: Omit<FileUploadOptions, 'fileName' | 'fileExtension'> = {}): Promise<string> {
    try {
      await access(filepath);
    } catch {
      throw new FileNotFoundError(filepath);
    }
    const data = await readFile(filepath);
    return this.fileUpload(data, partId, { ...options, fileName: basename(filepath), fileExtension: extname(filepath) });
  }

  async streamingDataCaptureUpload(data: Uint8Array, partId: string, fileExt: string, options: StreamingUploadOptions = {}): Promise<string> {
    const md = await this.connection.metadata();
    const [timeRequested, timeReceived] = options.dataRequestTimes ?? [new Date(), new Date()];
    const uploadMetadata: UploadMetadata = {
      partId,
      componentType: options.componentType ?? '',
      componentName: options.componentName ?? '',
      methodName: options.methodName ?? '',
      type: DataType.DATA_TYPE_BINARY_SENSOR,
      fileName: '',
      methodParameters: options.methodParameters,
      fileExtension: fileExt,
      tags: options.tags ?? [],
      datasetIds: options.datasetIds ?? [],
      mimeType: '',
      uploadId: options.uploadId ?? '',
    };
    return new Promise<string>((resolve, reject) => {
      const stream = this.dataSync.streamingDataCaptureUpload(md, (err, res) => (err ? reject(err) : resolve(res!.binaryDataId)));
      stream.write({ metadata: { uploadMetadata, sensorMetadata: { timeRequested, timeReceived, mimeType: '' } } });
      for (let offset = 0; offset < data.byteLength; offset += uploadChunkBytes) {
        stream.write({ data: Buffer.from(data.subarray(offset, offset + uploadChunkBytes)) });
      }
      stream.end();
    });
  }
}
