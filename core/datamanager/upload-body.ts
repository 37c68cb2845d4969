// Turns a capture file into DataCaptureUpload requests, as bytes. A record on disk is already a
// SensorData encoding, and a repeated message field is just each item framed as field 2, so a tabular
// file becomes one request by concatenation, without decoding a single reading. A binary file holds one
// datum per record; each record is its own request (the cloud takes one binary item per upload).
import { DataType, SensorData, UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { CaptureFileHeader } from './capture-file.js';
import { extensionForMime } from '../shared/capture-methods.js';

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

/** The requests of one closed capture file; `tags` are the data manager's, added to the file's own. */
export function uploadRequests(header: CaptureFileHeader, records: Buffer[], partId: string, tags: string[]): UploadRequest[] {
  if (header.kind === 'tabular') {
    const parts = field(0x0a, metadata(header, partId, tags, header.upload_id));
    for (const record of records) parts.push(...field(0x12, record));
    return [{ body: Buffer.concat(parts), uploadId: header.upload_id, items: records.length }];
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
