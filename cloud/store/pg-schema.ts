// The PostgreSQL schema of the scale-out mode: the tables of schema.ts (and of the modules that run on
// PostgreSQL) in PostgreSQL's dialect, applied at start as numbered migrations. Every process applies
// them when it opens the store; a transaction-scoped advisory lock makes the others wait while one
// applies them, and schema_migrations records each one applied, so a migration runs once per database.
// Add a migration at the end; never edit one that has shipped.
//
// Table and column names, column order and value types are the same as in schema.ts (a test compares
// them): modules' statements and INSERT ... VALUES without column lists must mean the same on both.
// Differences on purpose:
// - Primary keys on ids and indexes on the columns lookups filter by. DuckDB has none (its single
//   writer keeps ids unique; indexes slowed its appender); here several processes write at once.
// - tabular_data is partitioned by time_synced (the cloud's own clock when the upload arrived), one
//   partition per UTC day (pg-readings.ts), so that a day, once past, is closed and can be sealed
//   into a Parquet object and detached whole. Rows outside every day partition land in the default one.
// - JSON columns are `json`, not `jsonb`: the text comes back exactly as it was stored, as on DuckDB.
// - List columns are varchar[] (not text[]): statements cast list parameters to VARCHAR[] on both
//   backends, and PostgreSQL has no && or = ANY between text[] and varchar[].
import type { SqlSession } from './tabular.js';

export interface Migration {
  /** Unique and in order: NNNN-what. */
  id: string;
  statements: readonly string[];
}

export const pgMigrations: readonly Migration[] = [
  {
    id: '0001-tenancy-and-data',
    statements: [
      `CREATE TABLE organizations (id text PRIMARY KEY, name text NOT NULL, time_created timestamptz NOT NULL)`,
      `CREATE TABLE locations (id text PRIMARY KEY, organization_id text NOT NULL, name text NOT NULL, time_created timestamptz NOT NULL)`,
      `CREATE INDEX locations_organization ON locations (organization_id)`,
      `CREATE TABLE machines (
         id text PRIMARY KEY, organization_id text NOT NULL, location_id text NOT NULL, name text NOT NULL,
         time_created timestamptz NOT NULL)`,
      `CREATE INDEX machines_organization ON machines (organization_id)`,
      `CREATE TABLE machine_parts (
         id text PRIMARY KEY, machine_id text NOT NULL, organization_id text NOT NULL, location_id text NOT NULL,
         name text NOT NULL, main_part boolean NOT NULL, secret_hash text NOT NULL, time_created timestamptz NOT NULL)`,
      `CREATE INDEX machine_parts_machine ON machine_parts (machine_id)`,
      `CREATE INDEX machine_parts_organization ON machine_parts (organization_id)`,
      `CREATE TABLE api_keys (
         id text PRIMARY KEY, organization_id text NOT NULL, scope_type text NOT NULL, scope_id text NOT NULL,
         role text NOT NULL, key_hash text NOT NULL, time_created timestamptz NOT NULL,
         revoked_at timestamptz, rotated_at timestamptz)`,
      `CREATE INDEX api_keys_organization ON api_keys (organization_id)`,
      `CREATE TABLE tabular_data (
         seq bigint NOT NULL, upload_id text NOT NULL,
         organization_id text, location_id text, robot_id text, robot_name text, part_id text,
         part_name text, component_type text, component_name text, method_name text,
         method_parameters json, tags varchar[], time_requested timestamptz, time_received timestamptz,
         time_synced timestamptz, data json, internal boolean NOT NULL DEFAULT false, size_bytes integer NOT NULL DEFAULT 0)
       PARTITION BY RANGE (time_synced)`,
      `CREATE TABLE tabular_data_default PARTITION OF tabular_data DEFAULT`,
      `CREATE INDEX tabular_data_org_time ON tabular_data (organization_id, time_requested, seq)`,
      `CREATE INDEX tabular_data_upload ON tabular_data (upload_id)`,
      `CREATE TABLE binary_data (
         seq bigint NOT NULL, binary_data_id text PRIMARY KEY,
         organization_id text, location_id text, robot_id text, robot_name text, part_id text,
         part_name text, component_type text, component_name text, method_name text,
         method_parameters json, file_name text, file_ext text, mime_type text, tags varchar[],
         dataset_ids varchar[], time_requested timestamptz, time_received timestamptz, time_synced timestamptz,
         file_size_bytes bigint, uri text, blob_key text NOT NULL, internal boolean NOT NULL DEFAULT false)`,
      `CREATE INDEX binary_data_org_time ON binary_data (organization_id, time_requested, seq)`,
      `CREATE INDEX binary_data_blob ON binary_data (blob_key)`,
      `CREATE TABLE bounding_boxes (
         id text PRIMARY KEY, binary_data_id text NOT NULL, label text NOT NULL,
         x_min_normalized double precision NOT NULL, y_min_normalized double precision NOT NULL,
         x_max_normalized double precision NOT NULL, y_max_normalized double precision NOT NULL, confidence double precision)`,
      `CREATE INDEX bounding_boxes_binary ON bounding_boxes (binary_data_id)`,
      `CREATE TABLE datasets (id text PRIMARY KEY, name text NOT NULL, organization_id text NOT NULL, time_created timestamptz NOT NULL)`,
      `CREATE INDEX datasets_organization ON datasets (organization_id)`,
      `CREATE TABLE dataset_versions (
         dataset_id text NOT NULL, version integer NOT NULL, organization_id text NOT NULL, time_created timestamptz NOT NULL,
         split_train double precision NOT NULL, split_valid double precision NOT NULL, split_test double precision NOT NULL,
         split_seed bigint NOT NULL, image_count integer NOT NULL, train_count integer NOT NULL, valid_count integer NOT NULL,
         test_count integer NOT NULL, labels varchar[] NOT NULL, PRIMARY KEY (dataset_id, version))`,
      `CREATE TABLE dataset_version_members (
         dataset_id text NOT NULL, version integer NOT NULL, position integer NOT NULL, binary_data_id text NOT NULL,
         split text NOT NULL, tags varchar[] NOT NULL, boxes json NOT NULL, width integer NOT NULL, height integer NOT NULL,
         file_ext text NOT NULL, mime_type text NOT NULL, blob_key text NOT NULL, file_size_bytes bigint NOT NULL,
         part_id text, component_name text, time_requested timestamptz, PRIMARY KEY (dataset_id, version, position))`,
      `CREATE INDEX dataset_version_members_binary ON dataset_version_members (binary_data_id)`,
      `CREATE INDEX dataset_version_members_blob ON dataset_version_members (blob_key)`,
      // cloud/parts/part-configs.ts
      `CREATE TABLE part_configs (
         part_id text NOT NULL, revision bigint NOT NULL, config text NOT NULL,
         saved_by text NOT NULL, time_saved timestamptz NOT NULL, PRIMARY KEY (part_id, revision))`,
    ],
  },
  {
    // The last seq handed out per data table (pg-seq.ts): unique across processes, where DuckDB's
    // Store counts in its one process.
    id: '0002-data-seqs',
    statements: [
      'CREATE TABLE data_seqs (table_name text PRIMARY KEY, last bigint NOT NULL)',
      "INSERT INTO data_seqs VALUES ('tabular_data', 0), ('binary_data', 0)",
    ],
  },
  {
    // cloud/agent/releases.ts
    id: '0003-agent-releases',
    statements: [
      `CREATE TABLE agent_releases (
         subsystem text NOT NULL, version text NOT NULL, platform text NOT NULL,
         url text NOT NULL, sha256 text NOT NULL, time_created timestamptz NOT NULL, PRIMARY KEY (subsystem, version, platform))`,
      `CREATE TABLE agent_release_channels (
         subsystem text NOT NULL, channel text NOT NULL, version text NOT NULL, time_updated timestamptz NOT NULL,
         PRIMARY KEY (subsystem, channel))`,
    ],
  },
  {
    // cloud/parts/part-status.ts, cloud/query/pg/database-users.ts
    id: '0004-part-status-and-database-users',
    statements: [
      'CREATE TABLE part_status (part_id text PRIMARY KEY, time_reported timestamptz NOT NULL, status text NOT NULL)',
      `CREATE TABLE query_database_users (
         organization_id text PRIMARY KEY, username text NOT NULL UNIQUE, scram_salt text NOT NULL,
         scram_iterations integer NOT NULL, scram_stored_key text NOT NULL, scram_server_key text NOT NULL,
         time_modified timestamptz NOT NULL)`,
    ],
  },
  {
    // Sealed readings (cloud/query/sealed/sealer.ts): a closed UTC day of tabular_data written as one
    // Parquet object per organization into the blob store, listed here, and its partition dropped in
    // the same transaction. day is the day's start (00:00 UTC); a day sealed again (rows that arrived
    // after it was sealed) adds segments. A day is sealed once tabular_sealed_days has its row
    // (written in the same transaction as the day's segments); sealing goes oldest day first, so the
    // unsealed tail of every organization is the rows at or after the day after the newest sealed one.
    id: '0005-sealed-readings',
    statements: [
      `CREATE TABLE tabular_segments (
         organization_id text NOT NULL, day timestamptz NOT NULL, object_key text NOT NULL, row_count bigint NOT NULL,
         content_hash text NOT NULL, bytes bigint NOT NULL, time_sealed timestamptz NOT NULL,
         PRIMARY KEY (organization_id, day, content_hash))`,
      `CREATE INDEX tabular_segments_key ON tabular_segments (object_key)`,
      `CREATE TABLE tabular_sealed_days (day timestamptz PRIMARY KEY, row_count bigint NOT NULL, time_sealed timestamptz NOT NULL)`,
    ],
  },
  {
    // cloud/parts/part-logs.ts, pg-part-logs.ts: the same name as on DuckDB (logs.part_logs, there the
    // table of the logs' own database file), so that the statements reading it are written once.
    // seq comes from a sequence (nextval per row, in a batch's order). Indexes: a part's page newest
    // first (part, time, seq); a tail's poll for what came after a seq (part, seq); the retention
    // sweep (time).
    id: '0006-part-logs',
    statements: [
      'CREATE SCHEMA logs',
      `CREATE TABLE logs.part_logs (
         part_id text NOT NULL, time timestamptz NOT NULL, seq bigint NOT NULL, level text NOT NULL,
         logger_name text NOT NULL, message text NOT NULL, fields text NOT NULL)`,
      'CREATE SEQUENCE logs.part_logs_seq',
      'CREATE INDEX part_logs_part_time ON logs.part_logs (part_id, time, seq)',
      'CREATE INDEX part_logs_part_seq ON logs.part_logs (part_id, seq)',
      'CREATE INDEX part_logs_time ON logs.part_logs (time)',
    ],
  },
  {
    // cloud/datasync/pg-tabular-ingest.ts: the upload ids of tabular uploads named by a client's
    // upload_id (upload-dedup.ts), claimed by the statement that inserts the points, so that two
    // processes receiving one upload id commit it once. (tabular_data is partitioned by time, so no
    // unique key on its upload_id is possible.)
    id: '0007-tabular-upload-ids',
    statements: ['CREATE TABLE tabular_upload_ids (upload_id text PRIMARY KEY, time_committed timestamptz NOT NULL)'],
  },
  {
    // cloud/data/binary-data.ts, filter.ts: the data page's filters on binary data. A filter on part,
    // machine or location (and a location key's scope) walks its index in capture-time order, as the
    // organization's (0001) does; tags (&&) and dataset_ids (@>) are GIN lists; labels find their boxes.
    id: '0008-binary-data-filters',
    statements: [
      'CREATE INDEX binary_data_part_time ON binary_data (organization_id, part_id, time_requested, seq)',
      'CREATE INDEX binary_data_robot_time ON binary_data (organization_id, robot_id, time_requested, seq)',
      'CREATE INDEX binary_data_location_time ON binary_data (organization_id, location_id, time_requested, seq)',
      'CREATE INDEX binary_data_tags ON binary_data USING gin (tags)',
      'CREATE INDEX binary_data_dataset_ids ON binary_data USING gin (dataset_ids)',
      'CREATE INDEX bounding_boxes_label ON bounding_boxes (label, binary_data_id)',
    ],
  },
  {
    // cloud/mltraining/training-tables.ts (jobs, logs, models, scripts)
    id: '0009-training',
    statements: [
      `CREATE TABLE training_jobs (
         id text PRIMARY KEY, organization_id text NOT NULL, model_name text NOT NULL, model_version text NOT NULL,
         status text NOT NULL, created_on timestamptz NOT NULL, run_token text NOT NULL, queue_job_id text NOT NULL,
         job text NOT NULL)`,
      `CREATE INDEX training_jobs_organization ON training_jobs (organization_id, status)`,
      `CREATE UNIQUE INDEX training_jobs_model_version ON training_jobs (organization_id, model_name, model_version)`,
      `CREATE TABLE training_job_logs (
         job_id text NOT NULL, position integer NOT NULL, level text NOT NULL, time text NOT NULL, message text NOT NULL,
         PRIMARY KEY (job_id, position))`,
      `CREATE TABLE training_models (
         id text PRIMARY KEY, organization_id text NOT NULL, model_name text NOT NULL, model_version text NOT NULL,
         training_job_id text NOT NULL, created_on timestamptz NOT NULL, artefact text NOT NULL)`,
      `CREATE UNIQUE INDEX training_models_version ON training_models (organization_id, model_name, model_version)`,
      `CREATE TABLE training_scripts (
         organization_id text NOT NULL, registry_item_id text NOT NULL, version text NOT NULL, created_on timestamptz NOT NULL,
         unpacked_bytes bigint NOT NULL, blob_key text NOT NULL, script text NOT NULL,
         PRIMARY KEY (organization_id, registry_item_id, version))`,
    ],
  },
  {
    // What the processes of one cloud share instead of keeping it in one data dir or one memory:
    // the token secret (cloud/auth/token.ts, TokenSigner.forStore) and the login back-off's counts
    // (cloud/auth/login-backoff-pg.ts). PostgreSQL only: the embedded default keeps both in its process.
    id: '0010-cloud-secrets-and-login-failures',
    statements: [
      'CREATE TABLE cloud_secrets (name text PRIMARY KEY, value text NOT NULL, time_created timestamptz NOT NULL)',
      `CREATE TABLE login_failures (
         kind text NOT NULL, id text NOT NULL, window_start timestamptz NOT NULL, failures integer NOT NULL,
         blocked_until timestamptz, last_failed timestamptz NOT NULL, PRIMARY KEY (kind, id))`,
      'CREATE INDEX login_failures_last_failed ON login_failures (last_failed)',
    ],
  },
  {
    // cloud/data/tabular-data.ts: GetLatestTabularData and ExportTabularData name one source (part,
    // component, method) and read it in capture-time order. Without this they would read every
    // organization's rows; with it, the newest reading or the next export batch is an index walk.
    // (TabularDataByFilter's pages walk tabular_data_org_time of migration 0001.)
    id: '0011-tabular-source-index',
    statements: ['CREATE INDEX tabular_data_source_time ON tabular_data (part_id, component_name, method_name, time_requested, seq)'],
  },
  {
    // The upload_id index of tabular_data served only the dedup check of a repeated upload id, which
    // on PostgreSQL reads tabular_upload_ids (0007): without it every reading costs one index entry
    // less (about 70 of 380 bytes of WAL per reading, measured).
    id: '0012-drop-tabular-upload-index',
    statements: ['DROP INDEX tabular_data_upload'],
  },
  {
    // cloud/query/pipelines/pipeline-store.ts: data pipelines, their runs, sinks and retries.
    id: '0013-data-pipelines',
    statements: [
      `CREATE TABLE query_data_pipelines (
         id text PRIMARY KEY, organization_id text NOT NULL, name text NOT NULL, mql text NOT NULL,
         schedule text NOT NULL, source_type text NOT NULL, enabled boolean NOT NULL,
         time_created timestamptz NOT NULL, time_modified timestamptz NOT NULL, window_end timestamptz NOT NULL)`,
      `CREATE UNIQUE INDEX query_data_pipelines_name ON query_data_pipelines (organization_id, name)`,
      `CREATE TABLE query_data_pipeline_runs (
         id text PRIMARY KEY, pipeline_id text NOT NULL, status text NOT NULL, data_start timestamptz NOT NULL,
         data_end timestamptz NOT NULL, start_time timestamptz NOT NULL, end_time timestamptz NOT NULL,
         documents integer NOT NULL, error_message text NOT NULL)`,
      `CREATE INDEX query_data_pipeline_runs_pipeline ON query_data_pipeline_runs (pipeline_id, data_end)`,
      `CREATE TABLE query_data_pipeline_sink (
         pipeline_id text NOT NULL, run_id text NOT NULL, data_end timestamptz NOT NULL, position integer NOT NULL, doc text NOT NULL)`,
      `CREATE INDEX query_data_pipeline_sink_pipeline ON query_data_pipeline_sink (pipeline_id, data_end, position)`,
      `CREATE TABLE query_data_pipeline_retries (
         pipeline_id text NOT NULL, data_start timestamptz NOT NULL, data_end timestamptz NOT NULL,
         attempts integer NOT NULL, next_attempt timestamptz NOT NULL, PRIMARY KEY (pipeline_id, data_start, data_end))`,
    ],
  },
  {
    // cloud/mltraining/job-store.ts: the runs of a training job that a worker started and did not hand
    // back, counted in the claim; a takeover that finds PLATFORM_TRAINING_JOB_MAX_TAKES ends the job FAILED.
    id: '0014-training-job-takes',
    statements: ['ALTER TABLE training_jobs ADD COLUMN takes integer NOT NULL DEFAULT 0'],
  },
];

/** Any 64-bit number, the same in every process: the advisory lock that migrations are applied under. */
const MIGRATION_LOCK = 0x706c_6174_666f_726dn; // 'platform' in ASCII

/**
 * Applies the migrations not yet applied, in order, in one transaction; returns the ids it applied.
 * tx must be READ COMMITTED (not SERIALIZABLE): each statement then sees what was committed before it
 * began, so a process that waited for the lock sees the migrations that the lock's holder applied.
 */
export async function applyMigrations(tx: SqlSession, migrations: readonly Migration[] = pgMigrations): Promise<string[]> {
  await tx.execute('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  await tx.execute('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, time_applied timestamptz NOT NULL)');
  const done = new Set((await tx.query('SELECT id FROM schema_migrations')).map((r) => String(r.id)));
  // A database migrated by a newer version has tables this version does not know: running on it could
  // write rows the newer version misreads, so this version stops before touching anything.
  const known = new Set(migrations.map((m) => m.id));
  const unknown = [...done].filter((id) => !known.has(id)).sort();
  if (unknown.length > 0) {
    throw new Error(
      `the database has migration(s) ${unknown.join(', ')} that this version of platform-cloud does not know: a newer version ` +
        `upgraded it; run that version (old and new versions are not run together across a migration, cloud/store/OPERATIONS.md)`,
    );
  }
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    for (const sql of migration.statements) await tx.execute(sql);
    await tx.execute('INSERT INTO schema_migrations VALUES ($1, now())', [migration.id]);
    applied.push(migration.id);
  }
  return applied;
}
