// The agent's effective config: built-in defaults, then the manufacturer defaults file, then the
// cloud's `agent` object (or the offline machine config's). A later layer overrides an earlier one
// field by field; maps (platform_server_env, additional_networks) merge by key, arrays are replaced.
import { readFile } from 'node:fs/promises';
import { parseAgentConfig, type AgentConfig } from '../config/agent-config.js';
import { ConfigError } from '../../plugins/validation.js';

export type Layer = Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function mergeLayers(base: Layer, over: Layer): Layer {
  const out: Layer = { ...base };
  for (const [key, value] of Object.entries(over)) {
    // Own keys only: a layer's key "__proto__" (JSON and Structs keep it as data) must neither read
    // Object.prototype as a layer nor, assigned, become the merged layer's prototype, whose inherited
    // values would pass unvalidated. Defined as an own key, validation sees it and names it.
    const mine = Object.hasOwn(out, key) ? out[key] : undefined;
    const merged = isPlainObject(value) && isPlainObject(mine) ? mergeLayers(mine, value) : value;
    Object.defineProperty(out, key, { value: merged, enumerable: true, configurable: true, writable: true });
  }
  return out;
}

/**
 * Reads the manufacturer defaults file: the `agent` object's shape, or a document holding an `agent`
 * object. A missing file is an empty layer. A broken file is an error naming the file and the field.
 */
export async function readDefaultsLayer(file: string): Promise<Layer> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(file, (err as Error).message);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, `is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(doc)) throw new ConfigError(file, 'must hold a JSON object');
  const layer = isPlainObject(doc.agent) ? doc.agent : doc;
  parseAgentConfig(layer, `${file}:agent`);
  return layer;
}

/** Validates one layer alone (so its errors name where they come from) and then the merged result. */
export function effectiveAgentConfig(layers: { name: string; layer: Layer }[]): AgentConfig {
  let merged: Layer = {};
  for (const { name, layer } of layers) {
    parseAgentConfig(layer, name);
    merged = mergeLayers(merged, layer);
  }
  return parseAgentConfig(merged);
}
