// Tabular ingest with group commit on the store's insert lanes. Each upload is turned into DuckDB data
// chunks as soon as it arrives (while the lanes may still be busy); when a lane comes free, every upload
// waiting by then is written in one transaction on it and acknowledged once that has committed. Every
// acknowledged upload is durable, as before; busy lanes sync the log once for several uploads, and one
// lane's sync overlaps the other's inserting.
//
// The chunks hold only what varies from point to point (seq, the two capture times, the payload and its
// size) and go into a temporary staging table; one INSERT ... SELECT per upload then adds the columns
// that are the same for the whole upload (upload id, organization, ..., tags) as constants. Filling
// those twelve columns point by point cost 5.7 ms of the main thread per 1000 points, a string at a
// time through N-API; the INSERT does it inside DuckDB, off the main thread.
import {
  BIGINT,
  DuckDBDataChunk,
  INTEGER,
  LIST,
  listValue,
  TIMESTAMPTZ,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { randomUUID } from 'node:crypto';
import { internalTag } from '../store/schema.js';
import { PgStore } from '../store/pg-store.js';
import type { TabularStore } from '../store/tabular.js';
import { inTransaction, Store } from '../store/store.js';
import { timestampValue } from '../store/timestamp.js';
import type { CaptureFields, TabularPoint } from './ingest.js';
import { insertTabularPg } from './pg-tabular-ingest.js';

export type { TabularPoint } from './ingest.js';

// A temporary table belongs to its connection and never reaches the write-ahead log.
const stagingTable = 'tabular_staging';
const createStaging = `CREATE OR REPLACE TEMP TABLE ${stagingTable} (
  seq BIGINT NOT NULL, time_requested TIMESTAMPTZ, time_received TIMESTAMPTZ, data VARCHAR, size_bytes INTEGER NOT NULL)`;
/** Staged rows a lane keeps before it replaces its staging table (a few MB). */
const stagingRowsKept = 50_000;
const stagingTypes: DuckDBType[] = [BIGINT, TIMESTAMPTZ, TIMESTAMPTZ, VARCHAR, INTEGER];
// DuckDB keeps insertion order through INSERT ... SELECT, so rows stay in capture order within row groups.
const insertFromStaging = `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id,
    part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received,
    time_synced, data, internal, size_bytes)
  SELECT seq, $upload, $org, $loc, $robot, $robotName, $part, $partName, $ct, $cn, $mn, $mp, $tags, time_requested,
    time_received, $synced, data, $internal, size_bytes
  FROM ${stagingTable} WHERE seq BETWEEN $first AND $last`;
const constantTypes = { mp: VARCHAR, tags: LIST(VARCHAR), synced: TIMESTAMPTZ, first: BIGINT, last: BIGINT };

/** Points one transaction takes in at most (more wait for the next), which bounds the wait for an answer. */
const maxGroupPoints = 20_000;
const chunkRows = 2048; // DuckDB's vector size: a data chunk holds at most this many rows.

interface StagedUpload {
  points: number;
  lastSeq: bigint;
  chunks: DuckDBDataChunk[];
  /** Named parameters of insertFromStaging. */
  constants: Record<string, DuckDBValue>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Builds the staging chunks of one upload whose points get seq firstSeq, firstSeq + 1, ... */
function stagingChunks(points: TabularPoint[], firstSeq: bigint): DuckDBDataChunk[] {
  const chunks: DuckDBDataChunk[] = [];
  for (let start = 0; start < points.length; start += chunkRows) {
    const n = Math.min(chunkRows, points.length - start);
    const seq = new Array<bigint>(n);
    const requested = new Array<DuckDBValue>(n);
    const received = new Array<DuckDBValue>(n);
    const data = new Array<string>(n);
    const sizes = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const point = points[start + i];
      const json = point.json ?? JSON.stringify(point.data);
      seq[i] = firstSeq + BigInt(start + i);
      requested[i] = timestampValue(point.timeRequested);
      received[i] = timestampValue(point.timeReceived);
      data[i] = json;
      sizes[i] = Buffer.byteLength(json);
    }
    const chunk = DuckDBDataChunk.create(stagingTypes, n);
    chunk.setColumns([seq, requested, received, data, sizes]);
    chunks.push(chunk);
  }
  return chunks;
}

/** The staging table and the prepared INSERT of one writer connection. */
interface LaneState {
  /** Rows appended to the staging table since it was (re)created. */
  stagedRows: number;
  insert?: DuckDBPreparedStatement;
}

class TabularWriter {
  private pending: StagedUpload[] = [];
  private running = 0;
  private readonly lanes = new WeakMap<DuckDBConnection, LaneState>();

  constructor(private readonly store: Store) {}

  submit(capture: CaptureFields, points: TabularPoint[], uploadId: string = randomUUID()): { uploadId: string; committed: Promise<void> } {
    const p = capture.part;
    const firstSeq = this.store.reserveSeq('tabular_data', points.length);
    const lastSeq = firstSeq + BigInt(points.length) - 1n;
    const params = capture.methodParameters && Object.keys(capture.methodParameters).length > 0 ? JSON.stringify(capture.methodParameters) : null;
    const constants: Record<string, DuckDBValue> = {
      upload: uploadId,
      org: p.organizationId,
      loc: p.locationId,
      robot: p.machineId,
      robotName: p.robotName,
      part: p.partId,
      partName: p.partName,
      ct: capture.componentType,
      cn: capture.componentName,
      mn: capture.methodName,
      mp: params,
      tags: listValue(capture.tags),
      synced: timestampValue(),
      internal: capture.tags.includes(internalTag),
      first: firstSeq,
      last: lastSeq,
    };
    const chunks = stagingChunks(points, firstSeq);
    const committed = new Promise<void>((resolve, reject) => {
      this.pending.push({ points: points.length, lastSeq, chunks, constants, resolve, reject });
    });
    this.pump();
    return { uploadId, committed };
  }

  /**
   * Starts a transaction on a free insert lane for the uploads waiting, while there are uploads and
   * free lanes. Each transaction takes every upload waiting when its turn comes (up to
   * maxGroupPoints), so that one log sync serves them all.
   */
  private pump(): void {
    while (this.pending.length > 0 && this.running < Math.max(1, this.store.insertLaneCount)) {
      this.running++;
      this.store
        .insertWrite((conn) => this.commitWaiting(conn))
        .catch((err: unknown) => {
          // The store is closed: nothing of the waiting uploads was written.
          for (const upload of this.pending.splice(0)) upload.reject(err);
        })
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }

  private async commitWaiting(conn: DuckDBConnection): Promise<void> {
    const group: StagedUpload[] = [];
    let points = 0;
    while (this.pending.length > 0 && (points === 0 || points + this.pending[0].points <= maxGroupPoints)) {
      const upload = this.pending.shift()!;
      points += upload.points;
      group.push(upload);
    }
    if (group.length === 0) return;
    const failure = await this.commit(conn, group);
    if (failure === undefined) group.forEach((u) => u.resolve());
    else if (group.length === 1) group[0].reject(failure);
    else {
      // One bad upload must not fail the others: write each alone to find out which fail.
      for (const upload of group) {
        const err = await this.commit(conn, [upload]);
        if (err === undefined) upload.resolve();
        else upload.reject(err);
      }
    }
  }

  /**
   * Writes a group; returns the error when nothing of it was written. The staging table is temporary
   * (never logged), so the chunks go into it outside any transaction; one upload then needs a single
   * INSERT, which DuckDB commits (durably) on its own, and a group one transaction around its INSERTs.
   * Staged rows are not deleted after each upload (the INSERT picks its own by seq range): the table
   * is replaced once it holds stagingRowsKept rows, which keeps that work off most uploads' path.
   */
  private async commit(conn: DuckDBConnection, group: StagedUpload[]): Promise<unknown> {
    let lane = this.lanes.get(conn);
    if (!lane) this.lanes.set(conn, (lane = { stagedRows: stagingRowsKept }));
    try {
      if (lane.stagedRows >= stagingRowsKept) {
        await conn.run(createStaging);
        lane.insert?.destroySync(); // it was bound to the table just replaced
        lane.insert = undefined;
        lane.stagedRows = 0;
      }
      const insert = (lane.insert ??= await conn.prepare(insertFromStaging));
      const appender = await conn.createAppender(stagingTable, null, 'temp');
      try {
        for (const upload of group) for (const chunk of upload.chunks) appender.appendDataChunk(chunk);
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      for (const upload of group) lane.stagedRows += upload.points;
      const insertAll = async () => {
        for (const upload of group) {
          insert.clearBindings();
          insert.bind(upload.constants, constantTypes);
          await insert.run();
        }
      };
      if (group.length === 1) await insertAll();
      else await inTransaction(conn, insertAll);
      for (const upload of group) this.store.seqCommitted('tabular_data', upload.lastSeq);
      return undefined;
    } catch (err) {
      // Staged rows of a failed attempt must not meet a retry of the same seqs: start the table afresh.
      lane.stagedRows = stagingRowsKept;
      return err ?? new Error('tabular ingest failed');
    }
  }
}

const writers = new WeakMap<Store, TabularWriter>();

/** The stores insertTabular writes to: the DuckDB Store, or a PgStore (pg-tabular-ingest.ts). */
function ingestStoreOf(store: TabularStore): Store | PgStore {
  if (store instanceof Store || store instanceof PgStore) return store;
  throw new Error(`tabular ingest needs the DuckDB Store or a PgStore, not a ${store.constructor.name}`);
}

/**
 * Inserts the points of one upload and returns its upload id (the file_id answered to the caller) once
 * they are committed, on the DuckDB Store or on PostgreSQL (pg-tabular-ingest.ts). `storedId` is the upload id to store (derived from the client's, see upload-dedup.ts);
 * random when absent.
 */
export async function insertTabular(store: TabularStore, capture: CaptureFields, points: TabularPoint[], storedId?: string): Promise<string> {
  const target = ingestStoreOf(store);
  if (!(target instanceof Store)) return (await insertTabularPg(target, capture, points, storedId)).uploadId;
  let writer = writers.get(target);
  if (!writer) writers.set(target, (writer = new TabularWriter(target)));
  const { uploadId, committed } = writer.submit(capture, points, storedId);
  await committed;
  return uploadId;
}

/**
 * Inserts an upload named by a client's upload id (upload-dedup.ts) unless that id is committed
 * already; resolves true when this call inserted it. On PostgreSQL the id is claimed by the insert
 * itself (tabular_upload_ids), which holds across processes; on DuckDB, which one process owns,
 * UploadDedup has checked the id and runs one attempt per id at a time.
 */
export async function insertTabularOnce(store: TabularStore, capture: CaptureFields, points: TabularPoint[], storedId: string): Promise<boolean> {
  const target = ingestStoreOf(store);
  if (target instanceof PgStore) return (await insertTabularPg(target, capture, points, storedId, true)).inserted;
  await insertTabular(target, capture, points, storedId);
  return true;
}
