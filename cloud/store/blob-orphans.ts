// Blob files that no committed row names. An upload puts its content in the BlobStore first and commits
// its binary_data row after (cloud/datasync/ingest.ts), and a delete commits the row's removal before it
// removes the content (cloud/data/binary-data.ts); a kill -9 between the two steps leaves a blob that
// nothing names, and so do the temp files of a stream or durable write cut short. binary_data.blob_key
// names a blob (ML training reads content through it), and so does dataset_version_members.blob_key: a
// frozen dataset version keeps the content of data deleted after it was made; on PostgreSQL also
// tabular_segments.object_key (sealed readings). blobNames lists them.
//
// The sweep runs on either TabularStore. The embedded default sweeps once at start
// (cloud/server/cloud-server.ts); in the scale-out mode, where several processes share one database and
// one S3, startOrphanSweep runs it periodically on one of them, elected through a PostgreSQL advisory
// lock (pg-leader.ts). Two sweeps that overlap (a leader cut off that does not know it yet) are safe:
// each removes only blobs that no row names and that are older than the orphan age.
//
// Only blobs older than the orphan age are candidates: a younger one may belong to an upload whose row
// is about to commit (the sweep is written so that it stays safe while uploads run). Set the age with
//   PLATFORM_BLOB_ORPHAN_AGE_S   seconds (default 600; 0 removes every unnamed file)
import { LeaderElection } from './pg-leader.js';
import type { StoreWithBlobs, TabularStore } from './tabular.js';

/**
 * ML training's blobs (model files and script packages): named by its own tables
 * (cloud/mltraining/training-tables.ts), not by binary_data, so the sweep leaves the prefix alone.
 */
export const trainingBlobPrefix = 'mltraining/';

/** Default of PLATFORM_BLOB_ORPHAN_AGE_S: far longer than any upload takes from blob write to commit. */
export const defaultBlobOrphanAgeS = 600;

/** How many candidate keys are checked against the rows in one query. */
const batchSize = 20_000;

export function blobOrphanAgeMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PLATFORM_BLOB_ORPHAN_AGE_S;
  if (raw === undefined || raw === '') return defaultBlobOrphanAgeS * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`PLATFORM_BLOB_ORPHAN_AGE_S must be a number of seconds >= 0, got '${raw}'`);
  return value * 1000;
}

/**
 * Every column that names a blob, per backend. A module that writes the blob store names each object
 * in a row of its own table, committed after the object is written, and adds that column here, or the
 * sweep takes its objects for orphans once they are older than the orphan age.
 */
export const blobNames: Record<'duckdb' | 'postgres', readonly { table: string; column: string }[]> = {
  duckdb: [
    { table: 'binary_data', column: 'blob_key' },
    { table: 'dataset_version_members', column: 'blob_key' },
  ],
  postgres: [
    { table: 'binary_data', column: 'blob_key' },
    { table: 'dataset_version_members', column: 'blob_key' },
    // Sealed readings' Parquet segments (cloud/query/sealed/sealer.ts).
    { table: 'tabular_segments', column: 'object_key' },
  ],
};

/** The keys among `keys` that no committed row names (blobNames). */
async function unnamed(store: TabularStore, keys: string[]): Promise<string[]> {
  const unnamedBy = blobNames[store.dialect].map((n) => `NOT EXISTS (SELECT 1 FROM ${n.table} WHERE ${n.column} = t.k)`).join(' AND ');
  const rows = await store.query(`SELECT t.k FROM (SELECT unnest(CAST(? AS VARCHAR[])) AS k) t WHERE ${unnamedBy}`, [keys]);
  return rows.map((r) => String(r.k));
}

/**
 * Removes the store's blobs that are older than minAgeMs and that no committed row names; returns how
 * many it removed. A BlobStore that cannot list its objects is left alone (returns 0). `keepGoing` is
 * asked before each batch of removals (a leader that lost its lead stops).
 */
export async function removeOrphanBlobs(store: StoreWithBlobs, minAgeMs: number, now = Date.now(), keepGoing: () => boolean = () => true): Promise<number> {
  const list = store.blobs.list?.bind(store.blobs);
  if (!list) return 0;
  let removed = 0;
  let batch: string[] = [];
  const sweep = async () => {
    // Should a sweep run beside uploads, the age keeps it safe as long as no upload takes longer than
    // the age from its blob write to its commit.
    const orphans = await unnamed(store, batch);
    batch = [];
    for (const key of orphans) {
      if (!keepGoing()) return;
      await store.blobs.delete(key);
      removed++;
    }
  };
  for await (const blob of list()) {
    if (!keepGoing()) break;
    if (now - blob.modifiedMs < minAgeMs || blob.key.startsWith(trainingBlobPrefix)) continue;
    batch.push(blob.key);
    if (batch.length >= batchSize) await sweep();
  }
  if (batch.length > 0 && keepGoing()) await sweep();
  return removed;
}

export interface OrphanSweepOptions {
  /** Blobs younger than this are never removed (blobOrphanAgeMs()). */
  minAgeMs: number;
  /** How often the leader sweeps. Default: 10 minutes. */
  intervalMs?: number;
  /**
   * The scale-out mode: the PostgreSQL database whose processes elect one sweeper (pg-leader.ts), and
   * how often a follower tries to take the lead (default 1 s). Without it this process sweeps alone.
   */
  election?: { url: string; pollMs?: number };
  /** After each sweep: how many blobs it removed. */
  onSwept?: (removed: number) => void;
  /** A sweep or the election failed (the sweep runs again at the next interval). */
  onError?: (err: Error) => void;
}

export interface RunningOrphanSweep {
  /** Whether this process sweeps now (always, without an election). */
  readonly leading: boolean;
  /** Stops sweeping (waits for a sweep under way) and leaves the election. */
  stop(): Promise<void>;
}

/** The duty's name in the election: one sweeper per database. */
export const orphanSweepDuty = 'platform-cloud:blob-orphan-sweep';

/**
 * Sweeps orphaned blobs every intervalMs: on this process alone, or, with `election`, on the one
 * process of the database that holds the lead, starting as soon as it takes it.
 */
export function startOrphanSweep(store: StoreWithBlobs, options: OrphanSweepOptions): RunningOrphanSweep {
  const intervalMs = options.intervalMs ?? 600_000;
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new Error(`intervalMs must be a number of milliseconds > 0, got ${options.intervalMs}`);
  let leading = options.election === undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const keepGoing = () => leading && !stopped;
  const sweep = () => {
    timer = undefined;
    if (!keepGoing()) return;
    running = removeOrphanBlobs(store, options.minAgeMs, Date.now(), keepGoing)
      .then(
        (removed) => options.onSwept?.(removed),
        (err: unknown) => options.onError?.(err as Error),
      )
      .finally(() => {
        if (keepGoing()) timer = setTimeout(sweep, intervalMs);
      });
  };
  const election = options.election
    ? LeaderElection.start({
        url: options.election.url,
        name: orphanSweepDuty,
        pollMs: options.election.pollMs ?? 1000,
        onLeader: () => {
          leading = true;
          void running.then(() => {
            if (timer === undefined) sweep();
          });
        },
        onFollower: () => {
          leading = false;
          clearTimeout(timer);
          timer = undefined;
        },
        onError: (err) => options.onError?.(err),
      })
    : undefined;
  if (!election) sweep();
  return {
    get leading() {
      return leading && !stopped;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
      await election?.stop();
    },
  };
}
