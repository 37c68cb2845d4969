// Numbers from the environment, the two ways the programs read them. It lives in core/serving/ because
// the runtime, the agent and the cloud all take settings from environment variables.

/** A positive duration in milliseconds from the environment, or `fallback` when unset or not a positive number. */
export function envMs(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * A number setting: `fallback` when unset or empty; otherwise it must be a number >= `min`, or the
 * program refuses to start with an error naming the variable and the rule (a typo must not silently
 * become the default).
 */
export function envNumber(name: string, fallback: number, min: number, env?: NodeJS.ProcessEnv): number;
export function envNumber(name: string, fallback: number | undefined, min: number, env?: NodeJS.ProcessEnv): number | undefined;
export function envNumber(name: string, fallback: number | undefined, min: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got '${raw}'`);
  return value;
}

/**
 * A count or size setting (a whole number >= 1): `fallback` when unset or empty; anything else refuses to
 * start the program with an error naming the variable and the rule.
 */
export function envWholeNumber(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got "${text}"`);
  return n;
}
