// platform.app.datasync.v1.DataSyncService: the uploads of SPEC.md "Upload operations". A machine part
// (robot-secret token) uploads for itself; an owner API key may upload for any part in its scope.
import type { Metadata, Server, ServerReadableStream } from '@grpc/grpc-js';
import { invalidArgument, notFound, resourceExhausted, StatusError } from '../../core/serving/status-error.js';
import {
  DataSyncServiceService,
  DataType,
  type DataCaptureUploadRequest,
  type DataCaptureUploadResponse,
  type FileUploadRequest,
  type FileUploadResponse,
  type StreamingDataCaptureUploadRequest,
  type StreamingDataCaptureUploadResponse,
  type UploadMetadata,
} from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type Principal } from '../auth/principal.js';
import type { PartDirectory, PartInfo } from '../data/parts.js';
import { datasetIdsOfTags, datasetTag, missingDatasets } from '../data/dataset-tag.js';
import { clientStream, unary } from '../kit/handlers.js';
import { openBlobWriter, type BlobWriter } from '../store/blob-store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { insertBinary, type CaptureFields } from './ingest.js';
import { extensionOf, mimeTypeFor } from './mime.js';
import { insertTabular, insertTabularOnce, type TabularPoint } from './tabular-ingest.js';
import { decodeDataCaptureUploadRequest } from './struct-codec.js';
import { ByteBudget, captureUploadLimitsFromEnv, type CaptureUploadLimits } from './upload-budget.js';
import { storedIdFor, UploadDedup } from './upload-dedup.js';
import { untilClientEnd, uploadStreamLimitsFromEnv, UploadStreamSlots, type UploadStreamLimits } from './upload-streams.js';

/** Largest binary datum accepted from a stream; bigger uploads are RESOURCE_EXHAUSTED. */
export const maxBinaryBytes = 512 * 1024 * 1024;

export interface DataSyncDeps {
  /** The cloud's tables and blobs: the DuckDB Store, or a PgStore with S3 (issue 33). */
  store: StoreWithBlobs;
  authorizer: Authorizer;
  parts: PartDirectory;
  /** Default: from the environment (uploadStreamLimitsFromEnv). */
  streamLimits?: UploadStreamLimits;
  /** Default: from the environment (captureUploadLimitsFromEnv). */
  captureLimits?: CaptureUploadLimits;
}

const isSensor = (componentType: string, methodName: string) => /(^|:)sensor$/i.test(componentType) || methodName === 'Readings';

/** DuckDB timestamps span years 290308 BC to 294247 AD; a Date beyond JavaScript's range is invalid. */
function validTime(date: Date, field: string): Date {
  if (!Number.isFinite(date.getTime())) throw invalidArgument(`${field} is not a valid timestamp`);
  return date;
}

function checkTags(tags: string[], field: string): void {
  tags.forEach((tag, i) => {
    if (typeof tag !== 'string' || tag.trim() === '') throw invalidArgument(`${field}[${i}] must be a non-empty string`);
  });
}

export class DataSync {
  private readonly dedup: UploadDedup;
  private readonly streamLimits: UploadStreamLimits;
  private readonly streamSlots: UploadStreamSlots;
  private readonly captureLimits: CaptureUploadLimits;
  private readonly inFlight: ByteBudget;

  constructor(private readonly deps: DataSyncDeps) {
    this.dedup = new UploadDedup(deps.store);
    this.streamLimits = deps.streamLimits ?? uploadStreamLimitsFromEnv();
    this.streamSlots = new UploadStreamSlots(this.streamLimits.maxStreamsPerPrincipal);
    this.captureLimits = deps.captureLimits ?? captureUploadLimitsFromEnv();
    this.inFlight = new ByteBudget(this.captureLimits.maxInFlightBytesPerPrincipal);
  }

  /** Authenticates (unless given the principal), resolves metadata.part_id and checks that the caller may upload for it. */
  private async capture(
    metadata: Metadata,
    upload: UploadMetadata | undefined,
    field: string,
    known?: Principal,
  ): Promise<CaptureFields & { upload: UploadMetadata }> {
    const principal = known ?? (await this.deps.authorizer.authenticate(metadata));
    if (!upload) throw invalidArgument(`${field} is required and must come first`);
    const part: PartInfo = await this.deps.parts.require(upload.partId, `${field}.part_id`);
    this.deps.authorizer.checkUpload(principal, part);
    checkTags(upload.tags, `${field}.tags`);
    // A dataset's tag is its membership (dataset-tag.ts): as AddTags does, an upload may carry only the
    // tags of its own organization's datasets. Checked here, before any content arrives or is stored.
    const missing = await missingDatasets(this.deps.store, part.organizationId, datasetIdsOfTags(upload.tags));
    if (missing.length > 0) {
      throw notFound(`${field}.tags: ${missing.map(datasetTag).join(', ')} names no dataset of organization ${part.organizationId}`);
    }
    upload.datasetIds.forEach((d, i) => {
      if (!d) throw invalidArgument(`${field}.dataset_ids[${i}] must not be empty`);
    });
    return {
      upload,
      part,
      componentType: upload.componentType,
      componentName: upload.componentName,
      methodName: upload.methodName,
      methodParameters: upload.methodParameters,
      tags: [...new Set(upload.tags)],
    };
  }

  /**
   * DataCaptureUpload from its undecoded bytes: the caller is authenticated and the bytes taken from its
   * in-flight budget first, then the request is decoded under the point and value caps, so no request
   * builds more objects than the caps allow and one principal cannot decode many at once.
   */
  async dataCaptureUploadBytes(bytes: Uint8Array, metadata: Metadata): Promise<DataCaptureUploadResponse> {
    const principal = await this.deps.authorizer.authenticate(metadata);
    const release = this.inFlight.take(principal, bytes.byteLength, describePrincipal(principal));
    try {
      let request: DataCaptureUploadRequest;
      try {
        request = decodeDataCaptureUploadRequest(bytes, this.captureLimits);
      } catch (err) {
        if (err instanceof StatusError) throw err;
        // A malformed or too deeply nested request (RangeError): the caller's error, as handlers.ts has it.
        throw invalidArgument(`request: cannot be decoded (${(err as Error).message}); nest it less deeply`);
      }
      return await this.dataCaptureUpload(request, metadata, principal);
    } finally {
      release();
    }
  }

  async dataCaptureUpload(request: DataCaptureUploadRequest, metadata: Metadata, principal?: Principal): Promise<DataCaptureUploadResponse> {
    const capture = await this.capture(metadata, request.metadata, 'metadata', principal);
    const contents = request.sensorContents;
    if (contents.length === 0) throw invalidArgument('sensor_contents must hold at least one item');
    let type = capture.upload.type;
    if (type === DataType.DATA_TYPE_UNSPECIFIED) type = contents[0].struct ? DataType.DATA_TYPE_TABULAR_SENSOR : DataType.DATA_TYPE_BINARY_SENSOR;
    if (type === DataType.DATA_TYPE_TABULAR_SENSOR) {
      const sensor = isSensor(capture.componentType, capture.methodName);
      const now = new Date();
      const points: TabularPoint[] = contents.map((item, i) => {
        if (!item.struct) throw invalidArgument(`sensor_contents[${i}].struct is required for DATA_TYPE_TABULAR_SENSOR`);
        if (sensor && !('readings' in item.struct)) {
          throw invalidArgument(`sensor_contents[${i}].struct must have the key "readings" for sensor data`);
        }
        const timeRequested = validTime(item.metadata?.timeRequested ?? now, `sensor_contents[${i}].metadata.time_requested`);
        const timeReceived = validTime(item.metadata?.timeReceived ?? timeRequested, `sensor_contents[${i}].metadata.time_received`);
        if (timeReceived.getTime() < timeRequested.getTime()) {
          throw invalidArgument(`sensor_contents[${i}].metadata.time_received must not be before time_requested`);
        }
        checkFiniteNumbers(item.struct, `sensor_contents[${i}].struct`);
        return { timeRequested, timeReceived, data: item.struct };
      });
      if (!capture.upload.uploadId) return { fileId: await insertTabular(this.deps.store, capture, points), binaryDataId: '' };
      const storedId = storedIdFor(capture.part.partId, capture.upload.uploadId);
      await this.dedup.once('tabular', storedId, () => insertTabularOnce(this.deps.store, capture, points, storedId));
      return { fileId: storedId, binaryDataId: '' };
    }
    if (type !== DataType.DATA_TYPE_BINARY_SENSOR && type !== DataType.DATA_TYPE_FILE) {
      throw invalidArgument(`metadata.type ${type} is not a DataType`);
    }
    if (contents.length !== 1) throw invalidArgument(`sensor_contents must hold exactly one item for binary data, got ${contents.length}`);
    const item = contents[0];
    if (!item.binary) throw invalidArgument('sensor_contents[0].binary is required for binary data');
    const requested = item.metadata?.timeRequested && validTime(item.metadata.timeRequested, 'sensor_contents[0].metadata.time_requested');
    const received = item.metadata?.timeReceived && validTime(item.metadata.timeReceived, 'sensor_contents[0].metadata.time_received');
    const id = await this.storeBinary(capture, item.binary, requested, received, item.metadata?.mimeType);
    return { fileId: id, binaryDataId: id };
  }

  private async storeBinary(
    capture: CaptureFields & { upload: UploadMetadata },
    content: Uint8Array | BlobWriter,
    timeRequested = new Date(),
    timeReceived = timeRequested,
    declaredMime = '',
  ): Promise<string> {
    if (capture.upload.uploadId) {
      const id = storedIdFor(capture.part.partId, capture.upload.uploadId);
      let written = false;
      await this.dedup.once('binary', id, async () => {
        written = true;
        return (await this.insertBinaryOf(capture, content, timeRequested, timeReceived, declaredMime, id)).stored;
      });
      // A repeated upload found before writing: its content (possibly already in a blob writer) is not
      // kept. (One found at commit had its content removed by insertBinary.)
      if (!written && !(content instanceof Uint8Array)) await content.abort();
      return id;
    }
    return (await this.insertBinaryOf(capture, content, timeRequested, timeReceived, declaredMime)).id;
  }

  private insertBinaryOf(
    capture: CaptureFields & { upload: UploadMetadata },
    content: Uint8Array | BlobWriter,
    timeRequested: Date,
    timeReceived: Date,
    declaredMime: string,
    id?: string,
  ): Promise<{ id: string; stored: boolean }> {
    const ext = extensionOf(capture.upload.fileExtension, capture.upload.fileName);
    return insertBinary(this.deps.store, {
      id,
      ...capture,
      fileName: capture.upload.fileName,
      fileExtension: ext,
      mimeType: mimeTypeFor(ext, capture.upload.mimeType || declaredMime),
      datasetIds: [...new Set(capture.upload.datasetIds)],
      timeRequested,
      timeReceived,
      content,
    });
  }

  /**
   * Reads a client stream of uploads: the first message through `first` (which checks the caller and
   * all of its metadata before any content arrives, so a refused upload does not transfer its data), the
   * others through `chunk`, whose bytes go to a blob writer as they arrive rather than into memory, then
   * stores it with `store`. Content is stored only after the client's end of stream: a cancelled,
   * dropped or idle stream throws (untilClientEnd) and its writer is aborted, so nothing of it is kept or
   * remembered as a duplicate. The caller holds one of its principal's stream slots meanwhile.
   */
  private async receive<M, F>(
    call: ServerReadableStream<M, unknown>,
    rpc: 'FileUpload' | 'StreamingDataCaptureUpload',
    first: (message: M) => Promise<F>,
    chunk: (message: M, index: number) => Uint8Array,
    store: (head: F, writer: BlobWriter) => Promise<string>,
  ): Promise<string> {
    const principal = await this.deps.authorizer.authenticate(call.metadata);
    const release = this.streamSlots.take(principal, describePrincipal(principal));
    let head: F | undefined;
    let writer: BlobWriter | undefined;
    let index = 0;
    try {
      try {
        for await (const message of untilClientEnd(call, this.streamLimits.idleTimeoutMs, rpc)) {
          if (index++ === 0) {
            head = await first(message);
            writer = await openBlobWriter(this.deps.store.blobs);
            continue;
          }
          const data = chunk(message, index - 1);
          if (writer!.size + data.byteLength > maxBinaryBytes) throw resourceExhausted(`${rpc} content is larger than the limit of ${maxBinaryBytes} bytes`);
          await writer!.write(data);
        }
      } catch (err) {
        await writer?.abort();
        throw err;
      }
      if (head === undefined || !writer) throw invalidArgument(`${rpc} needs a first message with metadata`);
      // storeBinary commits the writer, or aborts it when anything fails.
      return await store(head, writer);
    } finally {
      release();
    }
  }

  async fileUpload(call: ServerReadableStream<FileUploadRequest, FileUploadResponse>): Promise<FileUploadResponse> {
    const id = await this.receive(
      call,
      'FileUpload',
      async (message) => {
        if (!message.metadata) throw invalidArgument('the first FileUpload message must carry metadata');
        return this.capture(call.metadata, message.metadata, 'metadata');
      },
      (message, index) => {
        if (message.metadata) throw invalidArgument(`FileUpload message ${index} carries metadata again; only the first may`);
        const data = message.fileContents?.data;
        if (!data) throw invalidArgument(`FileUpload message ${index} must carry file_contents`);
        return data;
      },
      (capture, writer) => this.storeBinary(capture, writer),
    );
    return { fileId: id, binaryDataId: id };
  }

  async streamingDataCaptureUpload(
    call: ServerReadableStream<StreamingDataCaptureUploadRequest, StreamingDataCaptureUploadResponse>,
  ): Promise<StreamingDataCaptureUploadResponse> {
    const id = await this.receive(
      call,
      'StreamingDataCaptureUpload',
      async (message) => {
        if (!message.metadata) throw invalidArgument('the first StreamingDataCaptureUpload message must carry metadata');
        const capture = await this.capture(call.metadata, message.metadata.uploadMetadata, 'metadata.upload_metadata');
        if (!extensionOf(capture.upload.fileExtension, capture.upload.fileName)) {
          throw invalidArgument('metadata.upload_metadata.file_extension is required: it determines the MIME type');
        }
        const sensor = message.metadata.sensorMetadata;
        const requested = sensor?.timeRequested && validTime(sensor.timeRequested, 'metadata.sensor_metadata.time_requested');
        const received = sensor?.timeReceived && validTime(sensor.timeReceived, 'metadata.sensor_metadata.time_received');
        return { capture, requested, received, mimeType: sensor?.mimeType };
      },
      (message, index) => {
        if (message.metadata) throw invalidArgument(`StreamingDataCaptureUpload message ${index} carries metadata again; only the first may`);
        if (!message.data) throw invalidArgument(`StreamingDataCaptureUpload message ${index} must carry data`);
        return message.data;
      },
      (head, writer) => this.storeBinary(head.capture, writer, head.requested, head.received, head.mimeType),
    );
    return { fileId: id, binaryDataId: id };
  }
}

/** A request grpc-js hands on undecoded. */
interface RawRequest {
  bytes: Buffer;
}

export function addDataSyncService(server: Server, deps: DataSyncDeps): void {
  const sync = new DataSync(deps);
  const impl = {
    dataCaptureUpload: unary((req: RawRequest, md) => sync.dataCaptureUploadBytes(req.bytes, md)),
    fileUpload: clientStream((call) => sync.fileUpload(call)),
    streamingDataCaptureUpload: clientStream((call) => sync.streamingDataCaptureUpload(call)),
  };
  // DataCaptureUpload's bytes reach the handler undecoded: it decodes them after authenticating the
  // caller and taking the bytes from its budget (grpc-js would decode before anyone knows the caller).
  const definition = {
    ...DataSyncServiceService,
    dataCaptureUpload: { ...DataSyncServiceService.dataCaptureUpload, requestDeserialize: (bytes: Buffer): RawRequest => ({ bytes }) },
  };
  server.addService(definition, impl);
}

/**
 * JSON (the stored form of readings) has no NaN or Infinity: JSON.stringify would store them as null
 * without a word. They are refused instead, naming the field, so no reading silently changes.
 */
export function checkFiniteNumbers(value: unknown, path: string): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw invalidArgument(`${path}: ${value} cannot be stored (readings are JSON, which has no NaN or Infinity); send null or a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkFiniteNumbers(v, `${path}[${i}]`));
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) checkFiniteNumbers(v, `${path}.${k}`);
  }
}
