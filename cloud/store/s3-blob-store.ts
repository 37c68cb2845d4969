// A BlobStore on an S3-compatible object store (AWS S3, Ceph's radosgw, s3rver in tests). Objects sit
// under `s3://bucket/prefix/<key>`. S3 makes an object visible atomically and durably when PutObject,
// CompleteMultipartUpload or CopyObject returns, which is the promise put() and commit() make: the
// metadata row that names a blob commits only after that.
//
// Credentials come from the AWS SDK's standard chain (environment, shared config and credentials files,
// web identity, container and instance metadata). For a store other than AWS, give its endpoint: requests
// then use path-style addressing (http://host/bucket/key), and checksums only where S3 requires them,
// since radosgw and s3rver do not read the SDK's newer trailing checksums.
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { pipeline, Readable, Transform } from 'node:stream';
import { blobKeyOf, uploadTempPattern, type BlobStore, type BlobWriter, type StoredBlob } from './blob-store.js';
import { S3BlobWriter, defaultPartBytes, minPartBytes } from './s3-blob-writer.js';
import { parseS3Uri, type S3Location } from './s3-location.js';

export { parseS3Uri, type S3Location };

export interface S3BlobStoreOptions {
  /** An S3-compatible service other than AWS, e.g. http://127.0.0.1:7480 (path-style addressing). */
  endpoint?: string;
  /** Default: AWS_REGION or the SDK's chain, else us-east-1 (which non-AWS stores accept). */
  region?: string;
  /** Settings passed on to the S3 client (e.g. credentials in tests); the standard chain otherwise. */
  client?: Partial<S3ClientConfig>;
  /** Size of the parts of a streamed upload (at least 5 MiB, S3's minimum). Default 8 MiB. */
  partBytes?: number;
}

/** The S3 client for an endpoint: path-style and required-only checksums off AWS. */
export function s3Client(options: S3BlobStoreOptions = {}): S3Client {
  const config: S3ClientConfig = { ...options.client };
  if (options.endpoint) {
    config.endpoint = options.endpoint;
    config.forcePathStyle = true;
    config.requestChecksumCalculation ??= 'WHEN_REQUIRED';
    config.responseChecksumValidation ??= 'WHEN_REQUIRED';
  }
  config.region ??= options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  return new S3Client(config);
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

export class S3BlobStore implements BlobStore {
  readonly partBytes: number;

  constructor(
    readonly client: S3Client,
    readonly location: S3Location,
    partBytes = defaultPartBytes,
  ) {
    if (!Number.isInteger(partBytes) || partBytes < minPartBytes)
      throw new Error(`partBytes must be an integer >= ${minPartBytes} (S3's smallest part), got ${partBytes}`);
    this.partBytes = partBytes;
  }

  /**
   * The store of an `s3://bucket/prefix` URI, once the bucket answers: a missing bucket, wrong
   * credentials or an unreachable endpoint fail here with the reason rather than at the first upload.
   */
  static async open(uri: string, options: S3BlobStoreOptions = {}): Promise<S3BlobStore> {
    const location = parseS3Uri(uri);
    const client = s3Client(options);
    try {
      await client.send(new HeadBucketCommand({ Bucket: location.bucket }));
    } catch (err) {
      client.destroy();
      const e = err as Error & { $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      const why = status === 404 ? 'does not exist' : status === 403 ? 'refuses these credentials' : `is not reachable (${e.name}: ${e.message})`;
      throw new Error(`the bucket '${location.bucket}' of ${uri}${options.endpoint ? ` at ${options.endpoint}` : ''} ${why}`, { cause: err });
    }
    return new S3BlobStore(client, location, options.partBytes);
  }

  /** Creates the bucket (for tests and first setup); an existing bucket we can use is fine. */
  static async createBucket(client: S3Client, bucket: string): Promise<void> {
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'BucketAlreadyOwnedByYou') return;
      // s3rver answers BucketAlreadyExists for a bucket of the same owner too: fine if it lets us in.
      if (name !== 'BucketAlreadyExists') throw err;
      await client.send(new HeadBucketCommand({ Bucket: bucket })).catch(() => Promise.reject(err));
    }
  }

  objectKey(key: string): string {
    return this.location.prefix + blobKeyOf(key);
  }

  async put(key: string, content: Uint8Array): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key), Body: content, ContentLength: content.byteLength }));
  }

  /** The GetObject response, or undefined for a key that is not there (as get and getStream answer it). */
  private async getObject(key: string): Promise<GetObjectCommandOutput | undefined> {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Reads the body as it streams in, into one buffer of the object's size. */
  async get(key: string): Promise<Buffer | undefined> {
    const response = await this.getObject(key);
    if (!response) return undefined;
    const body = response.Body as AsyncIterable<Uint8Array> | undefined;
    if (!body) return Buffer.alloc(0);
    const length = response.ContentLength;
    if (length === undefined) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of body) chunks.push(chunk);
      return Buffer.concat(chunks);
    }
    const content = Buffer.allocUnsafe(length);
    let offset = 0;
    for await (const chunk of body) {
      if (offset + chunk.byteLength > length) throw new Error(`the object ${key} is longer than its Content-Length ${length}`);
      content.set(chunk, offset);
      offset += chunk.byteLength;
    }
    if (offset !== length) throw new Error(`the object ${key} ended after ${offset} of its ${length} bytes`);
    return content;
  }

  /**
   * The body as it arrives, never held whole. A body that ends short of its Content-Length (the
   * connection dropped) or runs past it fails the stream, so a reader never takes a cut object for whole.
   */
  async getStream(key: string): Promise<Readable | undefined> {
    const response = await this.getObject(key);
    if (!response) return undefined;
    // In Node the SDK's body is the HTTP response, a Readable.
    const body = response.Body as Readable | undefined;
    if (!body) return Readable.from([]);
    const length = response.ContentLength;
    let got = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        got += chunk.byteLength;
        if (length !== undefined && got > length) done(new Error(`the object ${key} is longer than its Content-Length ${length}`));
        else done(null, chunk);
      },
      flush(done) {
        done(length === undefined || got === length ? null : new Error(`the object ${key} ended after ${got} of its ${length} bytes`));
      },
    });
    // pipeline: an error of the body fails the stream handed out, and destroying that one (a reader
    // that stopped early) destroys the body, which frees the connection. Errors reach the reader there.
    pipeline(body, counted, () => undefined);
    return counted;
  }

  /** DeleteObject succeeds for a missing key. A temp key's unfinished multipart uploads are aborted too. */
  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: objectKey }));
    if (uploadTempPattern.test(key)) {
      for await (const upload of this.multipartUploads(objectKey)) {
        if (upload.objectKey === objectKey) await S3BlobWriter.abortUpload(this.client, this.location.bucket, objectKey, upload.uploadId);
      }
    }
  }

  /** A multipart upload to a temp object; commit copies it to the key (see s3-blob-writer.ts). */
  async writer(): Promise<BlobWriter> {
    return new S3BlobWriter(this.client, this.location, this.partBytes);
  }

  /**
   * The objects under the store's prefix, and the unfinished multipart uploads of streamed uploads cut
   * short (listed as their temp key, dated when they began): the sweep removes both when no row names them.
   */
  async *list(prefix = ''): AsyncIterable<StoredBlob> {
    const { bucket } = this.location;
    const under = this.location.prefix + prefix;
    const temps = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: under, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        const key = object.Key!.slice(this.location.prefix.length);
        if (uploadTempPattern.test(key)) temps.add(key);
        yield { key, modifiedMs: object.LastModified?.getTime() ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    for await (const upload of this.multipartUploads(under)) {
      const key = upload.objectKey.slice(this.location.prefix.length);
      if (!uploadTempPattern.test(key) || temps.has(key)) continue;
      temps.add(key);
      yield { key, modifiedMs: upload.initiatedMs };
    }
  }

  private async *multipartUploads(prefix: string): AsyncIterable<{ objectKey: string; uploadId: string; initiatedMs: number }> {
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let page;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({ Bucket: this.location.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
        );
      } catch (err) {
        // s3rver does not list multipart uploads (501 NotImplemented); its unfinished uploads are not
        // readable objects, and there is nothing to abort through this call.
        if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 501) return;
        throw err;
      }
      for (const upload of page.Uploads ?? []) {
        if (upload.Key?.startsWith(prefix) && upload.UploadId) {
          yield { objectKey: upload.Key, uploadId: upload.UploadId, initiatedMs: upload.Initiated?.getTime() ?? 0 };
        }
      }
      if (!page.IsTruncated) return;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}
