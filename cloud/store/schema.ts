// The DuckDB schema of a cloud data dir. Table and column names are a contract with the SQL/MQL engine
// (cloud/query) and the ML training service (cloud/mltraining): add columns, never rename them.
//
// No PRIMARY KEY or index on the data tables: DuckDB rewrites list-column updates (tags) as
// delete+insert, which trips unique indexes, and indexes slow the appender. Ids are random UUIDs and
// `seq` is handed out by the single writer (see Store), so uniqueness holds without them.
export const schemaStatements: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS organizations (
     id VARCHAR NOT NULL, name VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS locations (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, name VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS machines (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, location_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
     time_created TIMESTAMPTZ NOT NULL)`,
  // secret_hash: scrypt hash of the part secret (see cloud/auth/secret-hash.ts); the secret itself is never stored.
  `CREATE TABLE IF NOT EXISTS machine_parts (
     id VARCHAR NOT NULL, machine_id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, location_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL, main_part BOOLEAN NOT NULL, secret_hash VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  // scope_type: 'organization' | 'location' | 'machine'; scope_id is the id of that org/location/machine.
  // role: 'owner' | 'operator'. key_hash: scrypt hash of the key.
  `CREATE TABLE IF NOT EXISTS api_keys (
     id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, scope_type VARCHAR NOT NULL, scope_id VARCHAR NOT NULL,
     role VARCHAR NOT NULL, key_hash VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  // revoked_at: set by `key revoke`; the key and its tokens are refused from then on. rotated_at: set by
  // `key rotate`; tokens issued before it (by the old secret) are refused.
  `ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS revoked_at TIMESTAMPTZ`,
  `ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS rotated_at TIMESTAMPTZ`,
  // One row per tabular point. seq orders rows that share a capture time (cursor tie-break); upload_id is
  // the file_id that DataCaptureUpload returned; internal marks platform-internal data (tag
  // 'platform:internal'), hidden unless include_internal_data; size_bytes is the payload's JSON size.
  `CREATE TABLE IF NOT EXISTS tabular_data (
     seq BIGINT NOT NULL, upload_id VARCHAR NOT NULL,
     organization_id VARCHAR, location_id VARCHAR, robot_id VARCHAR, robot_name VARCHAR, part_id VARCHAR,
     part_name VARCHAR, component_type VARCHAR, component_name VARCHAR, method_name VARCHAR,
     method_parameters JSON, tags VARCHAR[], time_requested TIMESTAMPTZ, time_received TIMESTAMPTZ,
     time_synced TIMESTAMPTZ, data JSON, internal BOOLEAN NOT NULL DEFAULT false, size_bytes INTEGER NOT NULL DEFAULT 0)`,
  // Metadata of one binary datum; its content is in the BlobStore under blob_key. uri is the
  // service-relative address of the content.
  `CREATE TABLE IF NOT EXISTS binary_data (
     seq BIGINT NOT NULL, binary_data_id VARCHAR NOT NULL,
     organization_id VARCHAR, location_id VARCHAR, robot_id VARCHAR, robot_name VARCHAR, part_id VARCHAR,
     part_name VARCHAR, component_type VARCHAR, component_name VARCHAR, method_name VARCHAR,
     method_parameters JSON, file_name VARCHAR, file_ext VARCHAR, mime_type VARCHAR, tags VARCHAR[],
     dataset_ids VARCHAR[], time_requested TIMESTAMPTZ, time_received TIMESTAMPTZ, time_synced TIMESTAMPTZ,
     file_size_bytes BIGINT, uri VARCHAR, blob_key VARCHAR NOT NULL, internal BOOLEAN NOT NULL DEFAULT false)`,
  `CREATE TABLE IF NOT EXISTS bounding_boxes (
     id VARCHAR NOT NULL, binary_data_id VARCHAR NOT NULL, label VARCHAR NOT NULL,
     x_min_normalized DOUBLE NOT NULL, y_min_normalized DOUBLE NOT NULL,
     x_max_normalized DOUBLE NOT NULL, y_max_normalized DOUBLE NOT NULL, confidence DOUBLE)`,
  `CREATE TABLE IF NOT EXISTS datasets (
     id VARCHAR NOT NULL, name VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL)`,
  // Frozen dataset versions (cloud/dataset/dataset-versions.ts): rows are inserted once and never
  // updated. A member keeps what its export needs (tags, boxes, size, capture fields and blob_key), so
  // later edits of the live data leave the version as it was; a blob a version names outlives the
  // binary datum it came from (binary-data.ts, blob-orphans.ts).
  `CREATE TABLE IF NOT EXISTS dataset_versions (
     dataset_id VARCHAR NOT NULL, version INTEGER NOT NULL, organization_id VARCHAR NOT NULL, time_created TIMESTAMPTZ NOT NULL,
     split_train DOUBLE NOT NULL, split_valid DOUBLE NOT NULL, split_test DOUBLE NOT NULL, split_seed BIGINT NOT NULL,
     image_count INTEGER NOT NULL, train_count INTEGER NOT NULL, valid_count INTEGER NOT NULL, test_count INTEGER NOT NULL,
     labels VARCHAR[] NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS dataset_version_members (
     dataset_id VARCHAR NOT NULL, version INTEGER NOT NULL, position INTEGER NOT NULL, binary_data_id VARCHAR NOT NULL,
     split VARCHAR NOT NULL, tags VARCHAR[] NOT NULL, boxes JSON NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
     file_ext VARCHAR NOT NULL, mime_type VARCHAR NOT NULL, blob_key VARCHAR NOT NULL, file_size_bytes BIGINT NOT NULL,
     part_id VARCHAR, component_name VARCHAR, time_requested TIMESTAMPTZ)`,
];

/** Tag that marks platform-internal data (e.g. for cloud mapping), hidden unless include_internal_data. */
export const internalTag = 'platform:internal';
