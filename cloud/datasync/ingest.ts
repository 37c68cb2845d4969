// Writes uploaded data, on either TabularStore (cloud/store/tabular.ts). Tabular points go in through
// tabular-ingest.ts; binary content goes to the BlobStore first (durable when put() returns) and its
// metadata row is committed after, so an acknowledged upload is always complete, and a crash between
// the two leaves at most a blob that no row names (swept by cloud/store/blob-orphans.ts), never a row
// naming a missing blob.
import { randomUUID } from 'node:crypto';
import { notFound } from '../../core/serving/status-error.js';
import type { PartInfo } from '../data/parts.js';
import { datasetIdsOfTags, datasetTag, missingDatasets } from '../data/dataset-tag.js';
import { internalTag } from '../store/schema.js';
import type { BlobWriter } from '../store/blob-store.js';
import { reserveSeqPg } from '../store/pg-seq.js';
import { Store } from '../store/store.js';
import type { SqlSession, StoreWithBlobs, TabularStore } from '../store/tabular.js';

export interface CaptureFields {
  part: PartInfo;
  componentType: string;
  componentName: string;
  methodName: string;
  methodParameters?: Record<string, unknown>;
  tags: string[];
}

/** One tabular point of an upload (tabular-ingest.ts, pg-tabular-ingest.ts). */
export interface TabularPoint {
  timeRequested: Date;
  timeReceived: Date;
  /** The payload, e.g. {readings: {...}}. */
  data: Record<string, unknown>;
  /** The payload already serialized as JSON (a decoder may produce it directly); stored instead of data. */
  json?: string;
}

export interface BinaryUpload extends CaptureFields {
  fileName: string;
  fileExtension: string;
  mimeType: string;
  datasetIds: string[];
  timeRequested: Date;
  timeReceived: Date;
  /** The content, or a writer that already holds it (a streamed upload); the writer is committed or aborted here. */
  content: Uint8Array | BlobWriter;
  /** The binary data id to store (derived from the client's upload id, see upload-dedup.ts); random when absent. */
  id?: string;
}

/**
 * Runs fn with n consecutive seq values of a data table reserved, inside one transaction of the
 * store. On DuckDB the values come from the Store's counter inside the transaction (which runs on its
 * one writer, so later rows get higher values) and are reported committed after it; on PostgreSQL
 * they are reserved before it (pg-seq.ts), since a reservation inside a SERIALIZABLE transaction would
 * make every concurrent writer conflict on the data_seqs row.
 */
export async function withSeqs<T>(
  store: TabularStore,
  table: 'tabular_data' | 'binary_data',
  n: number,
  fn: (tx: SqlSession, first: bigint) => Promise<T>,
): Promise<T> {
  if (store instanceof Store) {
    let last: bigint | undefined;
    const value = await store.transact(async (tx) => {
      const first = store.reserveSeq(table, n);
      const result = await fn(tx, first);
      last = first + BigInt(n) - 1n;
      return result;
    });
    if (last !== undefined) store.seqCommitted(table, last);
    return value;
  }
  const first = await reserveSeqPg(store, table, n);
  return store.transact((tx) => fn(tx, first));
}

/** The blob key of a new upload's content: a fresh name each time, so that two attempts at one upload id never share (or delete) each other's blob. */
const newBlobKey = (organizationId: string, id: string, shared: boolean) => (shared ? `${organizationId}/${id}-${randomUUID()}` : `${organizationId}/${id}`);

/**
 * Stores the content, then its metadata row; returns the binary data id, and whether this call stored
 * it: false when upload.id names a datum that is already committed (a repeated upload id, possibly
 * committed meanwhile by another process), in which case nothing is kept of this one.
 */
export async function insertBinary(store: StoreWithBlobs, upload: BinaryUpload): Promise<{ id: string; stored: boolean }> {
  const content = upload.content;
  try {
    return await insertBinaryOf(store, upload, content);
  } catch (err) {
    if (!(content instanceof Uint8Array)) await content.abort();
    throw err;
  }
}

const insertRow = `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
    component_type, component_name, method_name, method_parameters, file_name, file_ext, mime_type, tags, dataset_ids,
    time_requested, time_received, time_synced, file_size_bytes, uri, blob_key, internal)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS JSON), ?, ?, ?, CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), ?, ?, ?, ?, ?, ?, ?)`;

async function insertBinaryOf(store: StoreWithBlobs, upload: BinaryUpload, content: Uint8Array | BlobWriter): Promise<{ id: string; stored: boolean }> {
  const p = upload.part;
  const id = upload.id ?? randomUUID();
  // An upload id given by the client may be sent again while this attempt runs, in this process or
  // another: each attempt writes its own blob, and the one whose row commits keeps it.
  const blobKey = newBlobKey(p.organizationId, id, upload.id !== undefined);
  const size = content instanceof Uint8Array ? content.byteLength : content.size;
  const missing = await missingDatasets(store, p.organizationId, upload.datasetIds);
  if (missing.length > 0) throw notFound(`dataset_ids: no dataset ${missing.join(', ')} in organization ${p.organizationId}`);
  // Membership is both the id and the tag: the ids named gain their tags, and the tags carried (which
  // the caller checked, as for dataset_ids) gain their ids.
  const datasetIds = [...new Set([...upload.datasetIds, ...datasetIdsOfTags(upload.tags)])];
  const tagMissing = await missingDatasets(store, p.organizationId, datasetIds.slice(upload.datasetIds.length));
  if (tagMissing.length > 0) throw notFound(`tags: ${tagMissing.map(datasetTag).join(', ')} names no dataset of organization ${p.organizationId}`);
  const tags = [...new Set([...upload.tags, ...datasetIds.map(datasetTag)])];
  if (content instanceof Uint8Array) await store.blobs.put(blobKey, content);
  else await content.commit(blobKey);
  const params = upload.methodParameters && Object.keys(upload.methodParameters).length > 0 ? JSON.stringify(upload.methodParameters) : null;
  const row = (seq: bigint) => [
    seq,
    id,
    p.organizationId,
    p.locationId,
    p.machineId,
    p.robotName,
    p.partId,
    p.partName,
    upload.componentType,
    upload.componentName,
    upload.methodName,
    params,
    upload.fileName,
    upload.fileExtension,
    upload.mimeType,
    tags,
    datasetIds,
    upload.timeRequested,
    upload.timeReceived,
    new Date(),
    BigInt(size),
    `platform://binary/${id}`,
    blobKey,
    tags.includes(internalTag),
  ];
  let stored: boolean;
  try {
    if (store.dialect === 'postgres') {
      // binary_data_id is the primary key: of two attempts at one id, in any processes, the second
      // waits for the first's commit and then inserts nothing. One statement, no transaction around it.
      const seq = await reserveSeqPg(store, 'binary_data', 1);
      stored = (await store.execute(`${insertRow} ON CONFLICT (binary_data_id) DO NOTHING`, row(seq))) > 0;
    } else {
      stored = await withSeqs(store, 'binary_data', 1, async (tx, seq) => {
        // The check and the insert in one transaction, which DuckDB's one writer runs alone.
        if (upload.id !== undefined && (await tx.query('SELECT 1 FROM binary_data WHERE binary_data_id = ?', [id])).length > 0) return false;
        await tx.execute(insertRow, row(seq));
        return true;
      });
    }
  } catch (err) {
    await store.blobs.delete(blobKey).catch(() => undefined);
    throw err;
  }
  if (!stored) await store.blobs.delete(blobKey).catch(() => undefined);
  return { id, stored };
}
