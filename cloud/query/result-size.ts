// The size rules every user query result passes before it leaves the query engine, so that encoding it
// as BSON (cloud/data/data-service.ts, in the cloud process) cannot fail or crash:
// - no result document is larger than BSON's 16 MiB document limit. The bson package serializes into one
//   17 MiB buffer; a larger document comes out truncated without an error (a 20 MB string gave a
//   17,825,794-byte "document") or throws a RangeError, so the limit is checked here, by the computed size;
// - the whole result is at most PLATFORM_QUERY_MAX_BYTES, which cannot be set above gRPC's 64 MiB message
//   limit (cloud/server/cloud-server.ts): the encoding then allocates at most that many bytes, in pieces
//   of at most 16 MiB, far from V8's limits on one buffer or string.
import { calculateObjectSize } from 'bson';
import { envNumber } from '../../core/serving/env.js';
import { resourceExhausted } from '../../core/serving/status-error.js';

/** BSON's (and MongoDB's) largest document. */
export const MAX_DOCUMENT_BYTES = 16 * 2 ** 20;
/** The highest PLATFORM_QUERY_MAX_BYTES: the largest message platform-cloud's gRPC server sends. */
export const MAX_RESULT_BYTES_CAP = 64 * 2 ** 20;

export interface ResultSizeLimits {
  maxRows: number;
  maxBytes: number;
}

export const documentTooLarge = (field: string, index: number, size: number) =>
  resourceExhausted(`${field}: result document ${index} is ${size} bytes, larger than BSON's ${MAX_DOCUMENT_BYTES}-byte document limit; select smaller values`);

export const resultTooLarge = (field: string, maxBytes: number) =>
  resourceExhausted(`${field}: the result is larger than the ${maxBytes}-byte limit (PLATFORM_QUERY_MAX_BYTES); select fewer columns or rows`);

/** BSON size of one result document, refusing one over BSON's document limit. */
export function documentSize(doc: Record<string, unknown>, field: string, index: number): number {
  const size = calculateObjectSize(doc);
  if (size > MAX_DOCUMENT_BYTES) throw documentTooLarge(field, index, size);
  return size;
}

/** Checks a whole result against the row limit, the document limit and the byte limit; returns its BSON bytes. */
export function checkResultSize(docs: readonly Record<string, unknown>[], limits: ResultSizeLimits, field: string, unit = 'document'): number {
  if (docs.length > limits.maxRows) {
    throw resourceExhausted(`${field}: the result has more than the ${limits.maxRows}-${unit} limit (PLATFORM_QUERY_MAX_ROWS); add a $limit or $group`);
  }
  let bytes = 0;
  for (let i = 0; i < docs.length; i++) {
    bytes += documentSize(docs[i], field, i);
    if (bytes > limits.maxBytes) throw resultTooLarge(field, limits.maxBytes);
  }
  return bytes;
}

/** PLATFORM_QUERY_MAX_BYTES (default 4,000,000), refused above the 64 MiB cap at start. */
export function resultBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = envNumber('PLATFORM_QUERY_MAX_BYTES', 4_000_000, 1024, env);
  if (value > MAX_RESULT_BYTES_CAP) {
    throw new Error(`PLATFORM_QUERY_MAX_BYTES must be at most ${MAX_RESULT_BYTES_CAP} (gRPC's 64 MiB message limit), got ${value}`);
  }
  return value;
}
