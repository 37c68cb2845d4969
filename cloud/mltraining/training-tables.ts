// The tables of ML training (issue 33): jobs and their logs, stored models and training scripts, on
// either TabularStore backend. The content (model files, script packages) lives in the cloud's
// BlobStore under `mltraining/` (files on the embedded default, S3 in the scale-out mode), named by
// these rows; the orphan sweep (cloud/store/blob-orphans.ts) leaves that prefix alone.
//
// A job row keeps the job as JSON (training-job.ts) plus the columns that lookups filter by. status is
// authoritative (a cancel in one process and a run in another both write it); run_token names the run
// that owns an IN_PROGRESS job (a worker that took a dead worker's job writes a new one, and a write
// carrying an old token is refused: the job completes once). queue_job_id is the pg-boss job that
// carries it in the scale-out mode ('' on the embedded default). takes counts the runs a worker started
// and did not hand back (JobStore.claim, handBack): a takeover finding PLATFORM_TRAINING_JOB_MAX_TAKES of
// them ends the job FAILED instead of starting it again.
import type { TabularStore } from '../store/tabular.js';

/** Where ML training keeps its blobs in the cloud's BlobStore (the orphan sweep skips it). */
export { trainingBlobPrefix } from '../store/blob-orphans.js';

export const trainingTablesDuckdb = [
  `CREATE TABLE IF NOT EXISTS training_jobs (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, model_name VARCHAR NOT NULL, model_version VARCHAR NOT NULL,
     status VARCHAR NOT NULL, created_on TIMESTAMPTZ NOT NULL, run_token VARCHAR NOT NULL, queue_job_id VARCHAR NOT NULL,
     job VARCHAR NOT NULL, takes INTEGER NOT NULL DEFAULT 0)`,
  // A data directory made before the column existed (DuckDB adds no column with a constraint: NULL is
  // allowed there, and nothing writes one).
  `ALTER TABLE training_jobs ADD COLUMN IF NOT EXISTS takes INTEGER DEFAULT 0`,
  `CREATE TABLE IF NOT EXISTS training_job_logs (
     job_id VARCHAR NOT NULL, position INTEGER NOT NULL, level VARCHAR NOT NULL, time VARCHAR NOT NULL, message VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS training_models (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, model_name VARCHAR NOT NULL, model_version VARCHAR NOT NULL,
     training_job_id VARCHAR NOT NULL, created_on TIMESTAMPTZ NOT NULL, artefact VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS training_scripts (
     organization_id VARCHAR NOT NULL, registry_item_id VARCHAR NOT NULL, version VARCHAR NOT NULL, created_on TIMESTAMPTZ NOT NULL,
     unpacked_bytes BIGINT NOT NULL, blob_key VARCHAR NOT NULL, script VARCHAR NOT NULL)`,
];

/** Creates the tables on DuckDB; on PostgreSQL migration 0009-training (cloud/store/pg-schema.ts) made them, and this returns at once. */
export async function ensureTrainingTables(store: TabularStore): Promise<void> {
  if (store.dialect !== 'duckdb') return;
  for (const sql of trainingTablesDuckdb) await store.execute(sql);
}
