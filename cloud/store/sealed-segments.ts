// Where a process finds the sealed readings segments of its store as local files (issue 33's scale-out
// mode). The SQL/MQL engine's sealer moves closed days of tabular_data into Parquet segments in the blob
// store and drops their partitions (cloud/query/sealed/sealer.ts), so every reader of readings, the
// data API's too (cloud/data/sealed-readings.ts), reads an organization's sealed segments beside the
// unsealed rows in PostgreSQL. The query engine's segment cache registers itself here for its store when
// it starts (cloud/query/sealed/scale-out-query.ts); no registration, no sealer, no segments.
import type { TabularStore } from './tabular.js';

/**
 * A segment's object key: its day and the SHA-256 of its bytes. The sealer and DeleteTabularData's
 * rewrite (cloud/data/sealed-deletes.ts) both name objects so; readers and the orphan sweep go by the
 * manifest's object_key, not by this form.
 */
export const segmentKey = (day: Date, hash: string) => `sealed-readings/${day.toISOString().slice(0, 10)}/${hash}.parquet`;

/** A segment as tabular_segments lists it. */
export interface SealedSegment {
  key: string;
  hash: string;
  bytes: number;
}

/** Local copies of segments, held until released (the query node's SegmentCache). */
export interface SealedSegmentFiles {
  pin(segments: readonly SealedSegment[]): Promise<{ paths: string[]; release: () => void }>;
}

const byStore = new WeakMap<TabularStore, SealedSegmentFiles>();

export function useSealedSegmentFiles(store: TabularStore, files: SealedSegmentFiles): void {
  byStore.set(store, files);
}

export function sealedSegmentFilesOf(store: TabularStore): SealedSegmentFiles | undefined {
  return byStore.get(store);
}

/** The organization's sealed segments, oldest day first. */
export async function sealedSegmentsOf(store: TabularStore, organizationId: string): Promise<SealedSegment[]> {
  const rows = await store.query('SELECT object_key, content_hash, bytes FROM tabular_segments WHERE organization_id = ? ORDER BY day, content_hash', [
    organizationId,
  ]);
  return rows.map((r) => ({ key: String(r.object_key), hash: String(r.content_hash), bytes: Number(r.bytes) }));
}
