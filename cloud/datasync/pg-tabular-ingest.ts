// Tabular ingest on PostgreSQL (issue 33's scale-out mode): the counterpart of tabular-ingest.ts's
// appender and insert lanes. One upload is one INSERT ... SELECT over unnest() of four array
// parameters (the columns that vary per point, as tabular-ingest.ts stages them), with the columns
// that are the same for the whole upload as constants: a single statement, so the upload is committed
// whole or not at all, and acknowledged only once it is. Uploads of several processes insert at once.
//
// The per-point parameters are sent in the forms PostgreSQL reads fastest and node-postgres writes
// without its per-element work (bench:scale's end-to-end profile of the cloud: node-postgres' array
// formatting, dateToString and escapeElement, and the socket writes of the larger message were a third
// of the cloud's busy time): the two times as epoch milliseconds in bigint[] literals (a Date holds whole
// milliseconds; turned back into the same timestamptz exactly, in integer days and milliseconds, with
// no time zone involved), the readings as one JSON array, split by json_array_elements (each element's
// text is kept as sent, and validated as json as the cast of each one was), sizes as an int[] literal.
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

/**
 * The timestamptz of epoch milliseconds `ms` (a bigint), exactly: whole days and the milliseconds left
 * are each multiplied exactly (interval * float8 is exact below 2^53 microseconds, which a product of
 * the whole range would pass), added to a timestamp without time zone (calendar arithmetic, no daylight
 * saving), read as UTC.
 */
const fromEpochMs = (ms: string) =>
  `((TIMESTAMP '1970-01-01' + (${ms} / 86400000) * INTERVAL '1 day' + (${ms} % 86400000) * INTERVAL '1 millisecond') AT TIME ZONE 'UTC')`;

const columns = `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id,
    part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received,
    time_synced, data, internal, size_bytes)
  SELECT CAST($19 AS bigint) + p.n - 1, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CAST($15 AS json), CAST($16 AS VARCHAR[]),
    ${fromEpochMs('p.requested')}, ${fromEpochMs('p.received')}, $17, p.data, $18, p.size
  FROM ROWS FROM (unnest(CAST($1 AS bigint[])), unnest(CAST($2 AS bigint[])), json_array_elements(CAST($3 AS json)), unnest(CAST($4 AS integer[])))
    WITH ORDINALITY AS p(requested, received, data, size, n)`;

// No ORDER BY: seq comes from each point's ordinal, whatever order the rows are inserted in.
const insert = columns;

/** The same, inserting only when the upload id ($5) is claimed by this statement. */
const insertClaimed = `WITH claim AS (INSERT INTO tabular_upload_ids VALUES ($5, $17) ON CONFLICT (upload_id) DO NOTHING RETURNING upload_id)
  ${columns} WHERE EXISTS (SELECT 1 FROM claim)`;

/** A point's time as whole epoch milliseconds; an invalid Date (NaN) is refused, as PostgreSQL refused its text. */
function epochMs(time: Date, i: number, field: string): number {
  const ms = time.getTime();
  if (!Number.isFinite(ms)) throw new Error(`points[${i}].${field} is not a valid time`);
  return ms;
}

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
  // The seq range is reserved while the parameters are built (a round trip less on the upload's path).
  // A range whose insert never runs (a bad point below) is skipped, as one whose insert fails.
  const firstSeq = reserveSeqPg(store, 'tabular_data', points.length);
  firstSeq.catch(() => undefined); // awaited below; a failure of the loop first must not leave it unhandled
  // Literals built here, as strings: node-postgres passes a string as it is.
  let requested = '{';
  let received = '{';
  let data = '[';
  let sizes = '{';
  for (let i = 0; i < points.length; i++) {
    const point = points[i];
    const json = point.json ?? JSON.stringify(point.data);
    const comma = i === 0 ? '' : ',';
    requested += comma + epochMs(point.timeRequested, i, 'time_requested');
    received += comma + epochMs(point.timeReceived, i, 'time_received');
    data += comma + json;
    sizes += comma + Buffer.byteLength(json);
  }
  requested += '}';
  received += '}';
  data += ']';
  sizes += '}';
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
    await firstSeq,
  ]);
  return { uploadId, inserted: changed > 0 };
}
