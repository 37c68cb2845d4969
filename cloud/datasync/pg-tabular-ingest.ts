// Tabular ingest on PostgreSQL (issue 33's scale-out mode): the counterpart of tabular-ingest.ts's
// appender and insert lanes. One upload is one INSERT ... SELECT over unnest() of four array
// parameters (the columns that vary per point, as tabular-ingest.ts stages them), with the columns
// that are the same for the whole upload as constants: a single statement, so the upload is committed
// whole or not at all, and acknowledged only once it is. Uploads of several processes insert at once.
//
// seq: each upload reserves a range of consecutive values first (pg-seq.ts), unique across processes,
// given to the points in their order, as on DuckDB. The day's partition of
// tabular_data (time_synced) is made first if it does not exist (pg-readings.ts).
//
// An upload with a client's upload id (upload-dedup.ts) claims the id in tabular_upload_ids in the
// same statement: the statement inserts the points only when its claim is new, so two processes
// receiving the same upload id at once commit it once (the second waits on the first's key, then
// finds it taken and inserts nothing).
import { randomUUID } from 'node:crypto';
import { ensureReadingsPartition } from '../store/pg-readings.js';
import { reserveSeqPg } from '../store/pg-seq.js';
import type { PgStore } from '../store/pg-store.js';
import { internalTag } from '../store/schema.js';
import type { CaptureFields, TabularPoint } from './ingest.js';

const columns = `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id,
    part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received,
    time_synced, data, internal, size_bytes)
  SELECT CAST($19 AS bigint) + p.n - 1, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CAST($15 AS json), CAST($16 AS VARCHAR[]),
    p.requested, p.received, $17, CAST(p.data AS json), $18, p.size
  FROM unnest(CAST($1 AS timestamptz[]), CAST($2 AS timestamptz[]), CAST($3 AS text[]), CAST($4 AS integer[]))
    WITH ORDINALITY AS p(requested, received, data, size, n)`;

// No ORDER BY: seq comes from each point's ordinal, whatever order the rows are inserted in.
const insert = columns;

/** The same, inserting only when the upload id ($5) is claimed by this statement. */
const insertClaimed = `WITH claim AS (INSERT INTO tabular_upload_ids VALUES ($5, $17) ON CONFLICT (upload_id) DO NOTHING RETURNING upload_id)
  ${columns} WHERE EXISTS (SELECT 1 FROM claim)`;

/**
 * Inserts the points of one upload once they are committed; returns the upload id and whether they
 * were inserted: false only with `claim`, when the upload id was committed already.
 */
export async function insertTabularPg(
  store: PgStore,
  capture: CaptureFields,
  points: TabularPoint[],
  storedId?: string,
  claim = false,
): Promise<{ uploadId: string; inserted: boolean }> {
  const uploadId = storedId ?? randomUUID();
  if (points.length === 0) return { uploadId, inserted: true }; // nothing to write, as on DuckDB
  const p = capture.part;
  const synced = new Date();
  await ensureReadingsPartition(store, synced);
  const requested = new Array<Date>(points.length);
  const received = new Array<Date>(points.length);
  const data = new Array<string>(points.length);
  const sizes = new Array<number>(points.length);
  for (let i = 0; i < points.length; i++) {
    const point = points[i];
    const json = point.json ?? JSON.stringify(point.data);
    requested[i] = point.timeRequested;
    received[i] = point.timeReceived;
    data[i] = json;
    sizes[i] = Buffer.byteLength(json);
  }
  const params = capture.methodParameters && Object.keys(capture.methodParameters).length > 0 ? JSON.stringify(capture.methodParameters) : null;
  const changed = await store.executeRaw(claim ? insertClaimed : insert, [
    requested,
    received,
    data,
    sizes,
    uploadId,
    p.organizationId,
    p.locationId,
    p.machineId,
    p.robotName,
    p.partId,
    p.partName,
    capture.componentType,
    capture.componentName,
    capture.methodName,
    params,
    capture.tags,
    synced,
    capture.tags.includes(internalTag),
    await reserveSeqPg(store, 'tabular_data', points.length),
  ]);
  return { uploadId, inserted: changed > 0 };
}
