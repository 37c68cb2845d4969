// The config editor's text as a machine config object (the cloud validates the rest).
/** The editor's text as a config object, or an error naming robot_config and the rule. */
export function parseConfig(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`robot_config: not JSON (${(err as Error).message})`, { cause: err });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('robot_config: must be a JSON object');
  return parsed as Record<string, unknown>;
}
