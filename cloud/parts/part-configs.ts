// Every saved revision of each part's machine config, with its time and who saved it. A revision is
// validated before it is saved (checkPartConfig: the runtime's own schema and built-in model registry),
// so a machine is never sent a config that the runtime would reject for reasons the cloud can see.
import { builtinModels } from '../../drivers/index.js';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { dataManagerModel } from '../../core/resource/data-manager-model.js';
import { ModelRegistry } from '../../core/resource/model-registry.js';
import { checkPartConfig } from '../../core/resource/part-config.js';
import type { TabularStore } from '../store/tabular.js';
import { publishPartConfig } from './part-events.js';

export const partConfigTables = [
  `CREATE TABLE IF NOT EXISTS part_configs (
     part_id VARCHAR NOT NULL, revision BIGINT NOT NULL, config VARCHAR NOT NULL,
     saved_by VARCHAR NOT NULL, time_saved TIMESTAMPTZ NOT NULL)`,
];

/** On DuckDB the module makes its table; on PostgreSQL the schema's migrations did (cloud/store/pg-schema.ts). */
export async function ensurePartConfigTables(store: TabularStore): Promise<void> {
  if (store.dialect !== 'duckdb') return;
  for (const sql of partConfigTables) await store.execute(sql);
}

export interface PartRow {
  id: string;
  name: string;
  machineId: string;
  locationId: string;
  organizationId: string;
  mainPart: boolean;
}

export interface PartConfigRevision {
  revision: number;
  time: Date;
  savedBy: string;
  config: Record<string, unknown>;
}

/** The part, or NOT_FOUND naming it. */
export async function findPart(store: TabularStore, partId: string): Promise<PartRow> {
  if (!partId) throw invalidArgument('id is required: the part id');
  const rows = await store.query('SELECT id, name, machine_id, location_id, organization_id, main_part FROM machine_parts WHERE id = ?', [partId]);
  if (rows.length === 0) throw notFound(`machine part ${partId} does not exist`);
  const r = rows[0];
  return {
    id: String(r.id),
    name: String(r.name),
    machineId: String(r.machine_id),
    locationId: String(r.location_id),
    organizationId: String(r.organization_id),
    mainPart: Boolean(r.main_part),
  };
}

/** The main part of a machine (the one that `machine create` made), or NOT_FOUND. */
export async function mainPartOf(store: TabularStore, machineId: string): Promise<PartRow> {
  const rows = await store.query('SELECT id FROM machine_parts WHERE machine_id = ? ORDER BY main_part DESC, time_created LIMIT 1', [machineId]);
  if (rows.length === 0) throw notFound(`machine ${machineId} does not exist`);
  return findPart(store, String(rows[0].id));
}

let registry: ModelRegistry | undefined;
/** The built-in models, which every runtime of this version has. */
function builtinRegistry(): ModelRegistry {
  if (!registry) {
    registry = new ModelRegistry();
    for (const model of builtinModels) registry.register(model);
    // The runtime's built-in service that lives in core/ (core/server/compose.ts registers it there too).
    registry.register(dataManagerModel);
  }
  return registry;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Validates and saves a new revision; returns it. An invalid config is INVALID_ARGUMENT whose message
 * lists every error, one per line, each with its path and rule; nothing is saved then.
 */
export async function savePartConfig(store: TabularStore, partId: string, config: unknown, savedBy: string): Promise<PartConfigRevision> {
  await ensurePartConfigTables(store);
  await findPart(store, partId);
  if (!isObject(config)) throw invalidArgument('robot_config must be a JSON object (a machine config without "cloud")');
  const check = checkPartConfig(config, builtinRegistry());
  if (!check.ok) throw invalidArgument(`robot_config is invalid:\n${check.errors.map((e) => `  ${e}`).join('\n')}`);
  const time = new Date();
  const revision = await store.transact(async (tx) => {
    const [row] = await tx.query('SELECT coalesce(max(revision), 0) AS r FROM part_configs WHERE part_id = ?', [partId]);
    const next = Number(row.r) + 1;
    await tx.execute('INSERT INTO part_configs VALUES (?, ?, ?, ?, ?)', [partId, next, JSON.stringify(config), savedBy, time]);
    return next;
  });
  await publishPartConfig(store, partId, revision);
  return { revision, time, savedBy, config };
}

const revisionOf = (r: Record<string, unknown>): PartConfigRevision => ({
  revision: Number(r.revision),
  time: r.time_saved as Date,
  savedBy: String(r.saved_by),
  config: JSON.parse(String(r.config)) as Record<string, unknown>,
});

/** The newest revision, or undefined before the first save. */
export async function latestPartConfig(store: TabularStore, partId: string): Promise<PartConfigRevision | undefined> {
  await ensurePartConfigTables(store);
  const rows = await store.query('SELECT revision, time_saved, saved_by, config FROM part_configs WHERE part_id = ? ORDER BY revision DESC LIMIT 1', [partId]);
  return rows.length ? revisionOf(rows[0]) : undefined;
}

/** Every revision, newest first. */
export async function partConfigHistory(store: TabularStore, partId: string): Promise<PartConfigRevision[]> {
  await ensurePartConfigTables(store);
  const rows = await store.query('SELECT revision, time_saved, saved_by, config FROM part_configs WHERE part_id = ? ORDER BY revision DESC', [partId]);
  return rows.map(revisionOf);
}
