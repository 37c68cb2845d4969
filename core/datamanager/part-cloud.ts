// The data manager's way to the cloud: DataSyncService called as the machine part through the machine's
// one CloudLink (core/cloud-link/), which parses the address, refuses plaintext to a remote host without
// -allow-insecure-creds, authenticates and renews the token. The link is built here, in the data manager's
// worker, from the serialisable CloudLinkSettings that the runtime put into the attributes (`_cloud`).
import { Client } from '@grpc/grpc-js';
import { DataCaptureUploadResponse, FileUploadRequest, type UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { CloudLink } from '../cloud-link/cloud-link.js';
import { injectTraceContext } from '../serving/telemetry/grpc-tracing.js';
import { inSpan } from '../serving/telemetry/tracing.js';
import type { CloudLinkSettings } from '../cloud-link/link-settings.js';

export interface PartCloud {
  readonly partId: string;
  /** Sends one encoded DataCaptureUploadRequest; resolves when the cloud acknowledged (committed) it. */
  dataCaptureUpload(body: Buffer): Promise<void>;
  /** Sends a file as a FileUpload stream; resolves when the cloud acknowledged it. */
  fileUpload(metadata: UploadMetadata, data: Buffer): Promise<void>;
  close(): void;
}

const UPLOAD_PATH = '/platform.app.datasync.v1.DataSyncService/DataCaptureUpload';
const FILE_UPLOAD_PATH = '/platform.app.datasync.v1.DataSyncService/FileUpload';
const CALL_DEADLINE_MS = 60_000;
const CHUNK = 64 * 1024;

/** Throws InsecureCredentialsError (naming -allow-insecure-creds) before anything is dialled. */
export function connectPartCloud(settings: CloudLinkSettings): PartCloud {
  // Uploads are short calls: after an unreachable cloud, fresh channels find it again sooner.
  const link = new CloudLink(settings, { timeoutMs: CALL_DEADLINE_MS, resetWhenUnreachable: true });
  return {
    partId: link.partId,
    // With tracing on (in this worker, see driver.ts) each upload is a span whose context travels as
    // `traceparent`, so that the cloud's span of the call is its child. The context is passed by hand:
    // the worker keeps no async trace context (core/serving/telemetry/tracing.ts, asyncContext).
    dataCaptureUpload: (body) =>
      inSpan('sync DataCaptureUpload', { 'rpc.method': 'DataCaptureUpload' }, (trace) =>
        link.call(
          (md, options) =>
            new Promise<void>((resolve, reject) => {
              injectTraceContext(md, trace);
              link.client(Client).makeUnaryRequest(
                UPLOAD_PATH,
                (b: Buffer) => b,
                (b: Buffer) => DataCaptureUploadResponse.decode(b),
                body,
                md,
                options,
                (err) => (err ? reject(err) : resolve()),
              );
            }),
        ),
      ),
    fileUpload: (metadata, data) =>
      inSpan('sync FileUpload', { 'rpc.method': 'FileUpload' }, (trace) =>
        link.call(
          (md, options) =>
            new Promise<void>((resolve, reject) => {
              injectTraceContext(md, trace);
              const stream = link.client(Client).makeClientStreamRequest(
                FILE_UPLOAD_PATH,
                (m: FileUploadRequest) => Buffer.from(FileUploadRequest.encode(m).finish()),
                (b: Buffer) => b,
                md,
                options,
                (err) => (err ? reject(err) : resolve()),
              );
              stream.write({ metadata });
              for (let offset = 0; offset < data.byteLength; offset += CHUNK) stream.write({ fileContents: { data: data.subarray(offset, offset + CHUNK) } });
              stream.end();
            }),
        ),
      ),
    close: () => link.close(),
  };
}
