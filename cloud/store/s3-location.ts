// Where S3 blobs go, `s3://bucket/prefix`, parsed without loading the AWS SDK (which takes about 0.4 s
// to load and warns about Node versions), so that checking the flags costs the embedded default nothing.
import { blobKeyOf } from './blob-store.js';

/** Where blobs go: a bucket and a key prefix ('' or ending in '/'). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/** Parses `s3://bucket[/prefix]`; the prefix gets a trailing '/' so that keys are folders below it. */
export function parseS3Uri(uri: string): S3Location {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(uri);
  if (!match) throw new Error(`the artifacts destination '${uri}' must be an s3://bucket/prefix URI`);
  const bucket = match[1];
  // S3's bucket naming rules: 3 to 63 lower-case letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(`the bucket '${bucket}' of '${uri}' must be 3 to 63 lower-case letters, digits, '.' or '-'`);
  }
  const path = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket, prefix: path === '' ? '' : `${blobKeyOf(path)}/` };
}
