// The `agent` object (and `maintenance` window) of each part's saved machine config, as the agent
// service hands them to platform-agent. They live in the part's machine config (cloud/parts), the one
// source of truth per part: `platform-cloud agent config set` saves a new revision of the machine's main
// part with them, after validating them with the same schema the agent uses.
import { invalidArgument } from '../../core/serving/status-error.js';
import { parseAgentConfig } from '../../core/config/agent-config.js';
import { ConfigError } from '../../plugins/validation.js';
import type { TabularStore } from '../store/tabular.js';
import { ensurePartConfigTables, latestPartConfig, mainPartOf, savePartConfig } from '../parts/part-configs.js';

/** Kept for the extension's start-up; the agent config now lives in the part's machine config. */
export async function ensureMachineConfigTables(store: TabularStore): Promise<void> {
  await ensurePartConfigTables(store);
}

export interface SavedAgentConfig {
  agent: Record<string, unknown>;
  maintenance?: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Saves a machine's agent config. `config` is a machine config (with `agent` and maybe `maintenance`)
 * or the `agent` object alone.
 */
export async function setMachineAgentConfig(store: TabularStore, args: Record<string, unknown>): Promise<{ machine_id: string }> {
  await ensureMachineConfigTables(store);
  const machineId = args.machine;
  if (typeof machineId !== 'string' || !machineId) throw invalidArgument('machine is required');
  const doc = args.config;
  if (!isObject(doc)) throw invalidArgument('config must be a JSON object');
  const agent = isObject(doc.agent) ? doc.agent : 'agent' in doc ? undefined : doc;
  if (!agent) throw invalidArgument('config.agent must be an object');
  const { maintenance } = doc as { maintenance?: unknown };
  try {
    parseAgentConfig(agent, 'agent');
  } catch (err) {
    if (err instanceof ConfigError) throw invalidArgument(err.message);
    throw err;
  }
  if (
    maintenance !== undefined &&
    (!isObject(maintenance) || typeof maintenance.sensor_name !== 'string' || typeof maintenance.maintenance_allowed_key !== 'string')
  ) {
    throw invalidArgument('maintenance needs sensor_name and maintenance_allowed_key strings');
  }
  const part = await mainPartOf(store, machineId);
  const current = (await latestPartConfig(store, part.id))?.config ?? {};
  const next: Record<string, unknown> = { ...current, agent };
  if (agent !== doc) {
    if (maintenance === undefined) delete next.maintenance;
    else next.maintenance = maintenance;
  }
  await savePartConfig(store, part.id, next, 'admin (agent config set)');
  return { machine_id: machineId };
}

export async function getMachineAgentConfig(store: TabularStore, machineId: string): Promise<SavedAgentConfig> {
  return getPartAgentConfig(store, (await mainPartOf(store, machineId)).id);
}

/** The `agent` and `maintenance` objects of a part's newest saved machine config: one source of truth per part. */
export async function getPartAgentConfig(store: TabularStore, partId: string): Promise<SavedAgentConfig> {
  const config = (await latestPartConfig(store, partId))?.config ?? {};
  return {
    agent: isObject(config.agent) ? config.agent : {},
    ...(isObject(config.maintenance) ? { maintenance: config.maintenance } : {}),
  };
}
