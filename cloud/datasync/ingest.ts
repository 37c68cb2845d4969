// Writes uploaded data. Tabular points go in through DuckDB's appender, a data chunk (up to 2048 rows)
// at a time, in one transaction per upload; binary content goes to the BlobStore first (durable when
// put() returns) and its metadata row is committed after, so an acknowledged upload is always complete.
import {
  BIGINT,
  BOOLEAN,
  DuckDBDataChunk,
  INTEGER,
  LIST,
  listValue,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { randomUUID } from 'node:crypto';
import { notFound } from '../../core/grpc/status-error.js';
import type { PartInfo } from '../data/parts.js';
import { internalTag, tabularColumns } from '../store/schema.js';
import type { Store } from '../store/store.js';

export interface CaptureFields {
  part: PartInfo;
  componentType: string;
  componentName: string;
  methodName: string;
  methodParameters?: Record<string, unknown>;
  tags: string[];
}

export interface TabularPoint {
  timeRequested: Date;
  timeReceived: Date;
  /** The payload, e.g. {readings: {...}}. */
  data: Record<string, unknown>;
}

const tabularTypes: DuckDBType[] = [
  BIGINT, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR,
  LIST(VARCHAR), TIMESTAMPTZ, TIMESTAMPTZ, TIMESTAMPTZ, VARCHAR, BOOLEAN, INTEGER,
];
if (tabularTypes.length !== tabularColumns.length) throw new Error('tabularTypes must match tabularColumns');

const chunkRows = 2048; // DuckDB's vector size: a data chunk holds at most this many rows.
const tz = (date: Date) => timestampTZValue(BigInt(date.getTime()) * 1000n);

/** Inserts the points of one upload and returns its upload id (the file_id answered to the caller). */
export async function insertTabular(store: Store, capture: CaptureFields, points: TabularPoint[]): Promise<string> {
  const uploadId = randomUUID();
  const p = capture.part;
  const internal = capture.tags.includes(internalTag);
  const synced = tz(new Date());
  const params = capture.methodParameters && Object.keys(capture.methodParameters).length > 0 ? JSON.stringify(capture.methodParameters) : null;
  const constants: DuckDBValue[] = [
    uploadId, p.organizationId, p.locationId, p.machineId, p.robotName, p.partId, p.partName,
    capture.componentType, capture.componentName, capture.methodName, params, listValue(capture.tags),
  ];
  await store.transaction(async (conn) => {
    const firstSeq = store.reserveSeq('tabular_data', points.length);
    const appender = await conn.createAppender('tabular_data');
    try {
      for (let start = 0; start < points.length; start += chunkRows) {
        const slice = points.slice(start, start + chunkRows);
        const n = slice.length;
        const seq: bigint[] = [];
        const requested: DuckDBValue[] = [];
        const received: DuckDBValue[] = [];
        const data: string[] = [];
        const sizes: number[] = [];
        for (let i = 0; i < n; i++) {
          const point = slice[i];
          seq.push(firstSeq + BigInt(start + i));
          requested.push(tz(point.timeRequested));
          received.push(tz(point.timeReceived));
          const json = JSON.stringify(point.data);
          data.push(json);
          sizes.push(Buffer.byteLength(json));
        }
        const same = (v: DuckDBValue) => new Array<DuckDBValue>(n).fill(v);
        const chunk = DuckDBDataChunk.create(tabularTypes, n);
        chunk.setColumns([seq, ...constants.map(same), requested, received, same(synced), data, same(internal), sizes]);
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  });
  return uploadId;
}

export interface BinaryUpload extends CaptureFields {
  fileName: string;
  fileExtension: string;
  mimeType: string;
  datasetIds: string[];
  timeRequested: Date;
  timeReceived: Date;
  content: Uint8Array;
}

/** Stores the content, then its metadata row; returns the binary data id. */
export async function insertBinary(store: Store, upload: BinaryUpload): Promise<string> {
  const p = upload.part;
  const id = randomUUID();
  const blobKey = `${p.organizationId}/${id}`;
  if (upload.datasetIds.length > 0) {
    const rows = await store.query(
      `SELECT id FROM datasets WHERE organization_id = ? AND id IN (${upload.datasetIds.map(() => '?').join(', ')})`,
      [p.organizationId, ...upload.datasetIds],
    );
    const found = new Set(rows.map((r) => String(r.id)));
    const missing = upload.datasetIds.filter((d) => !found.has(d));
    if (missing.length > 0) throw notFound(`dataset_ids: no dataset ${missing.join(', ')} in organization ${p.organizationId}`);
  }
  const tags = [...new Set([...upload.tags, ...upload.datasetIds.map((d) => `PLATFORM_DATASET_${d}`)])];
  await store.blobs.put(blobKey, upload.content);
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
          seq, id, org: p.organizationId, loc: p.locationId, robot: p.machineId, robotName: p.robotName, part: p.partId,
          partName: p.partName, ct: upload.componentType, cn: upload.componentName, mn: upload.methodName, mp: params,
          fileName: upload.fileName, ext: upload.fileExtension, mime: upload.mimeType, tags: listValue(tags),
          datasets: listValue(upload.datasetIds), tr: tz(upload.timeRequested), trc: tz(upload.timeReceived),
          size: BigInt(upload.content.byteLength), uri: `platform://binary/${id}`, blobKey, internal: tags.includes(internalTag),
        },
        { tags: LIST(VARCHAR), datasets: LIST(VARCHAR), seq: BIGINT, size: BIGINT, mp: VARCHAR },
      );
    });
  } catch (err) {
    await store.blobs.delete(blobKey).catch(() => undefined);
    throw err;
  }
  return id;
}
