// Writes uploaded data. Tabular points go in through tabular-ingest.ts (appender, group commit); binary
// content goes to the BlobStore first (durable when put() returns) and its metadata row is committed
// after, so an acknowledged upload is always complete.
import { BIGINT, LIST, listValue, VARCHAR } from '@duckdb/node-api';
import { randomUUID } from 'node:crypto';
import { notFound } from '../../core/serving/status-error.js';
import type { PartInfo } from '../data/parts.js';
import { datasetIdsOfTags, datasetTag, missingDatasets } from '../data/dataset-tag.js';
import { internalTag } from '../store/schema.js';
import type { BlobWriter } from '../store/blob-store.js';
import type { Store } from '../store/store.js';
import { timestampValue } from '../store/timestamp.js';

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

/** Stores the content, then its metadata row; returns the binary data id. */
export async function insertBinary(store: Store, upload: BinaryUpload): Promise<string> {
  const content = upload.content;
  try {
    return await insertBinaryOf(store, upload, content);
  } catch (err) {
    if (!(content instanceof Uint8Array)) await content.abort();
    throw err;
  }
}

async function insertBinaryOf(store: Store, upload: BinaryUpload, content: Uint8Array | BlobWriter): Promise<string> {
  const p = upload.part;
  const id = upload.id ?? randomUUID();
  const blobKey = `${p.organizationId}/${id}`;
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
  try {
    await store.write(async (conn) => {
      const seq = store.reserveSeq('binary_data', 1);
      await conn.run(
        `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
           component_type, component_name, method_name, method_parameters, file_name, file_ext, mime_type, tags, dataset_ids,
           time_requested, time_received, time_synced, file_size_bytes, uri, blob_key, internal)
         VALUES ($seq, $id, $org, $loc, $robot, $robotName, $part, $partName, $ct, $cn, $mn, $mp, $fileName, $ext, $mime,
           $tags, $datasets, $tr, $trc, now(), $size, $uri, $blobKey, $internal)`,
        {
          seq,
          id,
          org: p.organizationId,
          loc: p.locationId,
          robot: p.machineId,
          robotName: p.robotName,
          part: p.partId,
          partName: p.partName,
          ct: upload.componentType,
          cn: upload.componentName,
          mn: upload.methodName,
          mp: params,
          fileName: upload.fileName,
          ext: upload.fileExtension,
          mime: upload.mimeType,
          tags: listValue(tags),
          datasets: listValue(datasetIds),
          tr: timestampValue(upload.timeRequested),
          trc: timestampValue(upload.timeReceived),
          size: BigInt(size),
          uri: `platform://binary/${id}`,
          blobKey,
          internal: tags.includes(internalTag),
        },
        { tags: LIST(VARCHAR), datasets: LIST(VARCHAR), seq: BIGINT, size: BIGINT, mp: VARCHAR },
      );
      store.seqCommitted('binary_data', seq);
    });
  } catch (err) {
    await store.blobs.delete(blobKey).catch(() => undefined);
    throw err;
  }
  return id;
}
