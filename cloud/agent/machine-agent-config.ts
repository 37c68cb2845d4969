// The saved `agent` object (and `maintenance` window) of each machine's config, as the agent service
// hands them to platform-agent. `platform-cloud agent config set` saves them after validating them with
// the same schema the agent uses, so a machine never receives a config it would reject.
import { invalidArgument, notFound } from '../../core/shared/status-error.js';
import { parseAgentConfig } from '../../core/shared/agent-config.js';
import { ConfigError } from '../../plugins/validation.js';
import type { Store } from '../store/store.js';
import { timestampValue } from '../store/timestamp.js';

export const machineConfigTables = [
  `CREATE TABLE IF NOT EXISTS agent_machine_configs (
     machine_id VARCHAR NOT NULL, organization_id VARCHAR NOT NULL, agent_config VARCHAR NOT NULL,
     maintenance VARCHAR, time_updated TIMESTAMPTZ NOT NULL)`,
];

export async function ensureMachineConfigTables(store: Store): Promise<void> {
  for (const sql of machineConfigTables) await store.execute(sql);
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
export async function setMachineAgentConfig(store: Store, args: Record<string, unknown>): Promise<{ machine_id: string }> {
  await ensureMachineConfigTables(store);
  const machineId = args.machine;
  if (typeof machineId !== 'string' || !machineId) throw invalidArgument('machine is required');
  const rows = await store.query('SELECT organization_id FROM machines WHERE id = ?', [machineId]);
  if (rows.length === 0) throw notFound(`machine ${machineId} does not exist`);
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
  if (maintenance !== undefined && (!isObject(maintenance) || typeof maintenance.sensor_name !== 'string' || typeof maintenance.maintenance_allowed_key !== 'string')) {
    throw invalidArgument('maintenance needs sensor_name and maintenance_allowed_key strings');
  }
  const save = agent === doc ? { agent } : { agent, maintenance };
  await store.transaction(async (conn) => {
    await conn.run('DELETE FROM agent_machine_configs WHERE machine_id = ?', [machineId]);
    await conn.run('INSERT INTO agent_machine_configs VALUES (?, ?, ?, ?, ?)', [
      machineId,
      String(rows[0].organization_id),
      JSON.stringify(save.agent),
      save.maintenance ? JSON.stringify(save.maintenance) : null,
      timestampValue(),
    ]);
  });
  return { machine_id: machineId };
}

export async function getMachineAgentConfig(store: Store, machineId: string): Promise<SavedAgentConfig> {
  await ensureMachineConfigTables(store);
  const rows = await store.query('SELECT agent_config, maintenance FROM agent_machine_configs WHERE machine_id = ?', [machineId]);
  if (rows.length === 0) return { agent: {} };
  return {
    agent: JSON.parse(String(rows[0].agent_config)) as Record<string, unknown>,
    ...(rows[0].maintenance ? { maintenance: JSON.parse(String(rows[0].maintenance)) as Record<string, unknown> } : {}),
  };
}
