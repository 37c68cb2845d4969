// The running config as RobotService.GetConfig shows it, and SaveConfig's validate-then-write for a machine
// run from a local file. The page and grpcurl see the config itself, but never the cloud credentials'
// secrets: the web port has no authentication, so those are replaced by a placeholder, and a saved config
// that still holds the placeholder keeps the file's own secret.
import { stat } from 'node:fs/promises';
import type * as pb from '../../gen/platform/robot/v1/robot.js';
import { ConfigError } from '../../plugins/validation.js';
import { writeFileDurable } from '../serving/durable-file.js';
import { InvalidConfigError, parseMachineConfigText } from './machine-config.js';

export const REDACTED_SECRET = '<redacted>';

/** Where a config source's config comes from, and where to edit it when SaveConfig cannot. */
export interface ConfigOrigin {
  source: 'file' | 'cloud';
  path: string;
  editHint?: string;
}

/** The secrets of a config's `cloud` section, by path (the only values GetConfig hides). */
const SECRET_PATHS = [
  ['cloud', 'secret'],
  ['cloud', 'api_key', 'key'],
];

function at(value: unknown, path: string[]): Record<string, unknown> | undefined {
  let node = value;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>) : undefined;
}

/** The config with its secrets replaced by REDACTED_SECRET, pretty-printed for an editor. */
export function redactedConfigText(raw: unknown): string {
  const copy = structuredClone(raw);
  for (const path of SECRET_PATHS) {
    const parent = at(copy, path.slice(0, -1));
    const key = path[path.length - 1];
    if (parent && typeof parent[key] === 'string') parent[key] = REDACTED_SECRET;
  }
  return JSON.stringify(copy, null, 2);
}

/** Puts the current file's secrets back where the new config still holds the placeholder. */
function restoreSecrets(next: unknown, current: unknown): void {
  for (const path of SECRET_PATHS) {
    const parent = at(next, path.slice(0, -1));
    const key = path[path.length - 1];
    const old = at(current, path.slice(0, -1))?.[key];
    if (parent && parent[key] === REDACTED_SECRET && typeof old === 'string') parent[key] = old;
  }
}

export function validationErrors(err: InvalidConfigError): pb.ConfigValidationError[] {
  return err.errors.map((e) => ({ path: e.path, rule: e.rule, message: e.message }));
}

/**
 * Validates `text` as a machine config and, when valid, writes it durably over `path` (temp file, fsync,
 * rename), keeping the file's permissions. `currentRaw` is the file's config now, for its secrets.
 * An invalid config is not written; its errors are returned.
 */
export async function saveConfigFile(path: string, text: string, currentRaw: unknown): Promise<pb.SaveConfigResponse> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { saved: false, errors: validationErrors(new InvalidConfigError([new ConfigError('config_json', `is not valid JSON: ${(err as Error).message}`)])) };
  }
  restoreSecrets(json, currentRaw);
  const written = `${JSON.stringify(json, null, 2)}\n`;
  try {
    parseMachineConfigText(written, 'config_json');
  } catch (err) {
    if (err instanceof InvalidConfigError) return { saved: false, errors: validationErrors(err) };
    throw err;
  }
  const mode = await stat(path).then(
    (s) => s.mode & 0o777,
    () => 0o600,
  );
  await writeFileDurable(path, written, mode);
  return { saved: true, errors: [] };
}
