// Blob files that no committed row names. An upload puts its content in the BlobStore first and commits
// its binary_data row after (cloud/datasync/ingest.ts), and a delete commits the row's removal before it
// removes the content (cloud/data/binary-data.ts); a kill -9 between the two steps leaves a file that
// nothing names, and so do the temp files of a stream or durable write cut short. platform-cloud sweeps
// them at start (cloud/server/cloud-server.ts). binary_data.blob_key names a blob (ML training reads
// content through it; nothing else writes the BlobStore), and so does dataset_version_members.blob_key:
// a frozen dataset version keeps the content of data deleted after it was made.
//
// Only files older than the orphan age are candidates: a younger one may belong to an upload whose row
// is about to commit (the sweep is written so that it stays safe while uploads run). Set the age with
//   PLATFORM_BLOB_ORPHAN_AGE_S   seconds (default 600; 0 removes every unnamed file)
import { LIST, listValue, VARCHAR } from '@duckdb/node-api';
import type { Store } from './store.js';

/** Default of PLATFORM_BLOB_ORPHAN_AGE_S: far longer than any upload takes from blob write to commit. */
export const defaultBlobOrphanAgeS = 600;

/** How many candidate keys are checked against binary_data in one query (one scan of blob_key each). */
const batchSize = 20_000;

export function blobOrphanAgeMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PLATFORM_BLOB_ORPHAN_AGE_S;
  if (raw === undefined || raw === '') return defaultBlobOrphanAgeS * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`PLATFORM_BLOB_ORPHAN_AGE_S must be a number of seconds >= 0, got '${raw}'`);
  return value * 1000;
}

/** The keys among `keys` that no committed binary_data row (nor a dataset version's member) names. */
async function unnamed(store: Store, keys: string[]): Promise<string[]> {
  const rows = await store.query(
    `SELECT t.k FROM (SELECT unnest(?) AS k) t ANTI JOIN binary_data b ON b.blob_key = t.k
       ANTI JOIN dataset_version_members v ON v.blob_key = t.k`,
    [listValue(keys)],
    [LIST(VARCHAR)],
  );
  return rows.map((r) => String(r.k));
}

/**
 * Removes the store's blob files that are older than minAgeMs and that no committed row names; returns
 * how many it removed. A BlobStore that cannot list its objects is left alone (returns 0).
 */
export async function removeOrphanBlobs(store: Store, minAgeMs: number, now = Date.now()): Promise<number> {
  const list = store.blobs.list?.bind(store.blobs);
  if (!list) return 0;
  let removed = 0;
  let batch: string[] = [];
  const sweep = async () => {
    // platform-cloud sweeps before it accepts calls; should a sweep run beside uploads, the age keeps it
    // safe as long as no upload takes longer than the age from its blob write to its commit.
    for (const key of await unnamed(store, batch)) {
      await store.blobs.delete(key);
      removed++;
    }
    batch = [];
  };
  for await (const blob of list()) {
    if (now - blob.modifiedMs < minAgeMs) continue;
    batch.push(blob.key);
    if (batch.length >= batchSize) await sweep();
  }
  if (batch.length > 0) await sweep();
  return removed;
}
