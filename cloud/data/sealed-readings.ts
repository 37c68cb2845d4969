// The data API's readings in the scale-out mode, sealed days included (issue 33). On PostgreSQL the
// SQL engine's sealer moves each closed day of tabular_data into Parquet segments per organization and
// drops the day's partition (cloud/query/sealed/sealer.ts), so a page, a count, the latest reading or
// an export of an organization reads two places: its unsealed rows in PostgreSQL (the tail) and its
// sealed segments, as local files of the segment cache (cloud/store/sealed-segments.ts), through a
// DuckDB of this module's own. The tail's statement and the sealed one are the same query in each
// dialect; the caller merges their rows.
//
// A day is in exactly one of the two places at any moment: the manifest is read before and after the
// tail, and the read is made again if a day was sealed in between. Segments never change (their names
// are their content hashes), so a segment's time range, read once, is kept: a page whose tail already
// holds `limit` rows reads only the segments that reach past the tail's last row, which for the
// newest-first pages that the data API mostly serves is none.
import { DuckDBInstance, listValue, timestampTZValue, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { unavailable } from '../../core/serving/status-error.js';
import { sealedSegmentFilesOf, sealedSegmentsOf, type SealedSegment, type SealedSegmentFiles } from '../store/sealed-segments.js';
import { rowObjectsOf, type Row } from '../store/store.js';
import type { TabularStore } from '../store/tabular.js';

/** A segment's columns as the embedded tabular_data's types. */
const SEGMENT_COLUMNS = [
  'CAST(seq AS BIGINT) AS seq',
  'CAST(upload_id AS VARCHAR) AS upload_id',
  ...['organization_id', 'location_id', 'robot_id', 'robot_name', 'part_id', 'part_name', 'component_type', 'component_name', 'method_name'].map(
    (c) => `CAST(${c} AS VARCHAR) AS ${c}`,
  ),
  'CAST(method_parameters AS VARCHAR) AS method_parameters',
  'CAST(tags AS VARCHAR[]) AS tags',
  ...['time_requested', 'time_received', 'time_synced'].map((c) => `CAST(${c} AS TIMESTAMPTZ) AS ${c}`),
  'CAST(data AS VARCHAR) AS data',
  'CAST(internal AS BOOLEAN) AS internal',
  'CAST(size_bytes AS INTEGER) AS size_bytes',
].join(', ');

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The segments as a relation named tabular_data, for a statement's FROM. */
const segmentsRelation = (paths: readonly string[]) => `(SELECT ${SEGMENT_COLUMNS} FROM read_parquet([${paths.map(sqlString).join(', ')}])) AS tabular_data`;

/** A value of a filter's or cursor's parameters as DuckDB binds it (a Date as TIMESTAMPTZ, a string[] as a list). */
function duckValue(v: unknown): DuckDBValue {
  if (v instanceof Date) return timestampTZValue(BigInt(v.getTime()) * 1000n);
  if (Array.isArray(v)) return listValue(v as string[]);
  return v as DuckDBValue;
}

export interface Bounds {
  lo: bigint;
  hi: bigint;
}

/** The DuckDB that reads segments, and the time ranges of the segments it has read, per segment cache. */
export class SegmentReader {
  private instance?: Promise<DuckDBInstance>;
  private readonly bounds = new Map<string, Bounds | null>();

  private async connect(): Promise<DuckDBConnection> {
    this.instance ??= DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
    return (await this.instance).connect();
  }

  async query(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const conn = await this.connect();
    try {
      return rowObjectsOf(await conn.runAndReadAll(sql, params.map(duckValue)));
    } finally {
      conn.closeSync();
    }
  }

  /** The segments (at paths) as a relation named tabular_data, for a statement's FROM. */
  relation(paths: readonly string[]): string {
    return segmentsRelation(paths);
  }

  /** The segment's capture times in microseconds (null: no rows), read once per segment. */
  async boundsOf(segment: SealedSegment, path: string): Promise<Bounds | null> {
    if (this.bounds.has(segment.hash)) return this.bounds.get(segment.hash)!;
    const [row] = await this.query(`SELECT epoch_us(min(time_requested)) AS lo, epoch_us(max(time_requested)) AS hi FROM ${segmentsRelation([path])}`, []);
    const bounds = row.lo === null ? null : { lo: BigInt(row.lo as bigint), hi: BigInt(row.hi as bigint) };
    this.bounds.set(segment.hash, bounds);
    return bounds;
  }
}

const readers = new WeakMap<SealedSegmentFiles, SegmentReader>();

/** The segment reader of a segment cache (one DuckDB per cache). */
export function segmentReaderOf(files: SealedSegmentFiles): SegmentReader {
  let reader = readers.get(files);
  if (!reader) readers.set(files, (reader = new SegmentReader()));
  return reader;
}

/** The organization's sealed segments as files, pinned while `use` runs. */
export interface SealedFiles {
  /** Runs `sql(relation)` over the segments whose time range passes `keep` (all without it). */
  query(sql: (relation: string) => string, params: readonly unknown[], keep?: (bounds: Bounds) => boolean): Promise<Row[]>;
}

const sameSegments = (a: readonly SealedSegment[], b: readonly SealedSegment[]) => a.length === b.length && a.every((s, i) => s.hash === b[i].hash);

/**
 * Runs `tail` (statements on the store: PostgreSQL's unsealed rows), then `sealed` over the
 * organization's sealed segments when it has any, each day seen in exactly one of them (see the
 * header). On DuckDB, and on PostgreSQL before any day is sealed, only `tail` runs.
 */
export async function readReadings<T>(
  store: TabularStore,
  organizationId: string,
  tail: () => Promise<T>,
  sealed: (files: SealedFiles, tail: T) => Promise<T>,
): Promise<T> {
  if (store.dialect !== 'postgres') return tail();
  for (let attempt = 0; ; attempt++) {
    const before = await sealedSegmentsOf(store, organizationId);
    const tailResult = await tail();
    // Read again even when there was none: a day sealed while the tail was read is in neither.
    const after = await sealedSegmentsOf(store, organizationId);
    if (!sameSegments(before, after)) {
      if (attempt < 5) continue;
      throw unavailable('readings were being sealed throughout the read; try again');
    }
    if (before.length === 0) return tailResult;
    const files = sealedSegmentFilesOf(store);
    if (!files) throw unavailable('this platform-cloud has sealed readings but no segment cache (the cloud/query extension is missing)');
    const r = segmentReaderOf(files);
    const { paths, release } = await files.pin(before);
    try {
      return await sealed(
        {
          async query(sql, params, keep) {
            let chosen = paths;
            if (keep) {
              chosen = [];
              for (const [i, segment] of before.entries()) {
                const bounds = await r.boundsOf(segment, paths[i]);
                if (bounds && keep(bounds)) chosen.push(paths[i]);
              }
            }
            return chosen.length === 0 ? [] : r.query(sql(segmentsRelation(chosen)), params);
          },
        },
        tailResult,
      );
    } finally {
      release();
    }
  }
}
