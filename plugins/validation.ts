// Config validation helpers shared by the machine config, built-in models and module plugins.
// Every error names the path of the offending value and the rule it broke, e.g.
//   components[1].attributes.max_power_pct 1.5: must be at most 1
import * as z from 'zod';

/** A config error: `path` is a JSON-path-like string such as `components[1].attributes.pins`. */
export class ConfigError extends Error {
  constructor(
    readonly path: string,
    readonly rule: string,
    readonly value?: unknown,
  ) {
    super(`${path || '(config)'}${value === undefined ? '' : ` ${describeValue(value)}`}: ${rule}`);
    this.name = 'ConfigError';
  }
}

/** Formats a value for an error message, short enough to read. */
export function describeValue(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Joins a base path and zod-style path segments: ('components[1]', ['attributes', 'pins', 0]). */
export function joinPath(base: string, segments: readonly PropertyKey[]): string {
  let path = base;
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else path += path ? `.${String(segment)}` : String(segment);
  }
  return path;
}

function valueAt(root: unknown, segments: readonly PropertyKey[]): unknown {
  let value: unknown = root;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** Turns the issues of a failed zod parse into ConfigErrors under `basePath`. */
export function configErrorsFromZod(error: z.ZodError, basePath: string, input: unknown): ConfigError[] {
  return error.issues.map((issue) => {
    const segments = issue.path as PropertyKey[];
    const value = issue.code === 'unrecognized_keys' ? undefined : valueAt(input, segments);
    const rule = issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message;
    return new ConfigError(joinPath(basePath, segments), rule, value);
  });
}

/**
 * Parses `input` with `schema`; throws the first ConfigError (the others are attached as `all`).
 * Use it in model validators: `const attrs = parseConfig(schema, raw, path)`.
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, basePath: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = configErrorsFromZod(result.error, basePath, input);
  const first = errors[0];
  throw Object.assign(first, { all: errors });
}
