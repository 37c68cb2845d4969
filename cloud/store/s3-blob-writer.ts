// Streamed uploads into S3. The content's key is known only at commit (ingest names the blob after it
// has checked the upload), and a multipart upload is bound to its key from the start, so content
// larger than one part goes to a temp object, `<prefix>.upload-<uuid>.tmp`, named like the file store's
// temp files: commit completes it, copies it to the key (a copy inside S3: no bytes pass through us)
// and removes it. Content that fits in one part never becomes a temp object: commit puts it under the
// key directly. Either way the key's object appears whole, once, and is durable when commit resolves.
//
// Memory per upload is at most two parts: one being filled while the one before it is sent, so that
// receiving and sending overlap. A writer cut short (kill -9) leaves an unfinished multipart upload or
// a temp object; S3BlobStore.list names both as the temp key, and the orphan sweep removes them.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { blobKeyOf, type BlobWriter } from './blob-store.js';
import type { S3Location } from './s3-location.js';

export type { S3Location };

/** S3 refuses parts below 5 MiB, except the last. */
export const minPartBytes = 5 * 1024 * 1024;
export const defaultPartBytes = 8 * 1024 * 1024;

/** A key in a CopySource header: each segment percent-encoded. */
function copySource(bucket: string, objectKey: string): string {
  return `${bucket}/${objectKey.split('/').map(encodeURIComponent).join('/')}`;
}

export class S3BlobWriter implements BlobWriter {
  size = 0;
  private part: Buffer;
  private filled = 0;
  private readonly tempKey: string;
  private uploadId: string | undefined;
  private readonly parts: CompletedPart[] = [];
  /** The part being sent, if any; a failure is kept and thrown by the next write or commit. */
  private sending: Promise<void> = Promise.resolve();
  private failure: unknown;
  /** Set when the multipart upload has become the temp object. */
  private tempComplete = false;
  private closed = false;

  constructor(
    private readonly client: S3Client,
    private readonly location: S3Location,
    private readonly partBytes: number,
  ) {
    this.part = Buffer.allocUnsafe(partBytes);
    this.tempKey = `${location.prefix}.upload-${randomUUID()}.tmp`;
  }

  static async abortUpload(client: S3Client, bucket: string, objectKey: string, uploadId: string): Promise<void> {
    try {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: objectKey, UploadId: uploadId }));
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      // 404: already completed or aborted (by another sweep, or an abort after a failed commit). 405 and
      // 501: the service cannot abort uploads (s3rver); their parts never become a readable object.
      if ((err as Error).name !== 'NoSuchUpload' && status !== 404 && status !== 405 && status !== 501) throw err;
    }
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.closed) throw new Error('the blob writer is closed');
    if (this.failure) throw this.failure;
    let offset = 0;
    while (offset < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - offset, this.partBytes - this.filled);
      this.part.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === this.partBytes) await this.sendPart();
    }
    this.size += chunk.byteLength;
  }

  /** Waits for the part before, then starts sending the filled one and hands back a fresh buffer. */
  private async sendPart(): Promise<void> {
    await this.sending;
    if (this.failure) throw this.failure;
    const { bucket } = this.location;
    this.uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: this.tempKey }))).UploadId;
    const uploadId = this.uploadId!;
    const body = this.filled === this.partBytes ? this.part : this.part.subarray(0, this.filled);
    const partNumber = this.parts.length + 1;
    this.parts.push({ PartNumber: partNumber });
    this.sending = this.client
      .send(
        new UploadPartCommand({ Bucket: bucket, Key: this.tempKey, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: body.byteLength }),
      )
      .then(
        (response) => void (this.parts[partNumber - 1].ETag = response.ETag),
        (err: unknown) => void (this.failure ??= err),
      );
    // The last part's buffer is not reused: only a full part asks for a new one.
    if (this.filled === this.partBytes) this.part = Buffer.allocUnsafe(this.partBytes);
    this.filled = 0;
  }

  async commit(key: string): Promise<void> {
    if (this.closed) throw new Error('the blob writer is closed');
    if (this.failure) throw this.failure;
    const objectKey = this.location.prefix + blobKeyOf(key);
    const { bucket } = this.location;
    this.closed = true;
    if (this.uploadId === undefined) {
      // Fits in one part: a plain PutObject, no temp object.
      const body = this.part.subarray(0, this.filled);
      await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: objectKey, Body: body, ContentLength: body.byteLength }));
      this.part = Buffer.alloc(0);
      return;
    }
    if (this.filled > 0) await this.sendPart();
    await this.sending;
    if (this.failure) throw this.failure;
    await this.client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: this.tempKey, UploadId: this.uploadId, MultipartUpload: { Parts: this.parts } }),
    );
    this.tempComplete = true;
    await this.client.send(new CopyObjectCommand({ Bucket: bucket, Key: objectKey, CopySource: copySource(bucket, this.tempKey) }));
    // The content is stored; a temp object left by a failed delete is an orphan for the sweep.
    await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: this.tempKey })).catch(() => undefined);
    this.tempComplete = false;
    this.uploadId = undefined;
    this.part = Buffer.alloc(0);
  }

  async abort(): Promise<void> {
    this.closed = true;
    this.part = Buffer.alloc(0);
    await this.sending;
    const { bucket } = this.location;
    const uploadId = this.uploadId;
    this.uploadId = undefined;
    if (this.tempComplete) {
      this.tempComplete = false;
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: this.tempKey }));
    } else if (uploadId !== undefined) {
      await S3BlobWriter.abortUpload(this.client, bucket, this.tempKey, uploadId);
    }
  }
}
