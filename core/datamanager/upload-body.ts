// Turns a capture file into DataCaptureUpload requests, as bytes. A record on disk is already a
// SensorData encoding, and a repeated message field is just each item framed as field 2, so a tabular
// file becomes one request by concatenation, without decoding a single reading. A binary file holds one
// datum per record; each record is its own request (the cloud takes one binary item per upload).
import { DataType, SensorData, UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { CaptureFileHeader } from './capture-file.js';
import { extensionForMime } from '../resource/capture-methods.js';

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function field(tag: number, payload: Uint8Array): Buffer[] {
  return [Buffer.from([tag]), varint(payload.byteLength), Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)];
}

export interface UploadRequest {
  /** The DataCaptureUploadRequest, encoded. */
  body: Buffer;
  uploadId: string;
  /** Points (tabular) or data (binary) in the request. */
  items: number;
}

function metadata(header: CaptureFileHeader, partId: string, tags: string[], uploadId: string, fileExtension = ''): Uint8Array {
  return UploadMetadata.encode({
    partId,
    componentType: header.component_type,
    componentName: header.component_name,
    methodName: header.method_name,
    type: header.kind === 'tabular' ? DataType.DATA_TYPE_TABULAR_SENSOR : DataType.DATA_TYPE_BINARY_SENSOR,
    fileName: '',
    methodParameters: Object.keys(header.method_parameters).length ? header.method_parameters : undefined,
    fileExtension,
    tags: [...new Set([...tags, ...header.tags])],
    datasetIds: [],
    mimeType: '',
    uploadId,
  }).finish();
}

/**
 * Points and bytes of points per tabular request: well under the cloud's caps (PLATFORM_UPLOAD_MAX_POINTS,
 * 100,000 by default, and its 64 MiB message limit), so a large capture file is never refused whole.
 */
export const MAX_POINTS_PER_REQUEST = 10_000;
export const MAX_POINT_BYTES_PER_REQUEST = 8 * 1024 * 1024;

/** Consecutive runs of records within both request limits (every run holds at least one record). */
function batches(records: Buffer[]): Buffer[][] {
  const out: Buffer[][] = [];
  let current: Buffer[] = [];
  let bytes = 0;
  for (const record of records) {
    if (current.length > 0 && (current.length >= MAX_POINTS_PER_REQUEST || bytes + record.byteLength > MAX_POINT_BYTES_PER_REQUEST)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += record.byteLength;
  }
  if (current.length > 0 || out.length === 0) out.push(current);
  return out;
}

/**
 * The requests of one closed capture file; `tags` are the data manager's, added to the file's own. A
 * tabular file is one request unless it passes the request limits; then the first keeps the file's
 * upload id (as a file of one request always has) and the n-th (n ≥ 1) gets `<upload id>/<n>`.
 */
export function uploadRequests(header: CaptureFileHeader, records: Buffer[], partId: string, tags: string[]): UploadRequest[] {
  if (header.kind === 'tabular') {
    return batches(records).map((batch, i) => {
      const uploadId = i === 0 || !header.upload_id ? header.upload_id : `${header.upload_id}/${i}`;
      const parts = field(0x0a, metadata(header, partId, tags, uploadId));
      for (const record of batch) parts.push(...field(0x12, record));
      return { body: Buffer.concat(parts), uploadId, items: batch.length };
    });
  }
  return records.map((record, i) => {
    const uploadId = `${header.upload_id}/${i}`;
    const mime = SensorData.decode(record).metadata?.mimeType ?? '';
    return {
      body: Buffer.concat([...field(0x0a, metadata(header, partId, tags, uploadId, extensionForMime(mime))), ...field(0x12, record)]),
      uploadId,
      items: 1,
    };
  });
}
