// One component or service entry of the machine config (SPEC.md "Resource configuration envelope").
// Entries are validated one at a time: an invalid entry becomes an error of that resource only.
import * as z from 'zod';
import { checkModelName, parseApi } from '../../plugins/names.js';
import { ConfigError, configErrorsFromZod } from '../../plugins/validation.js';
import { LEVEL_NAMES, type LevelName } from './log-levels.js';
import { serviceConfigsSchema, type ServiceConfig } from './service-configs.js';

export const RESOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const envelope = z.strictObject({
  name: z
    .string({ error: 'is required and must be a string' })
    .regex(RESOURCE_NAME, 'must start with a letter or digit and hold only letters, digits, _ and -'),
  api: z.string({ error: 'is required and must be a string' }),
  model: z.string({ error: 'is required and must be a string' }),
  attributes: z.record(z.string(), z.unknown(), { error: 'must be an object' }).default({}),
  depends_on: z.array(z.string({ error: 'must be a resource name' }), { error: 'must be an array of resource names' }).default([]),
  log_configuration: z
    .strictObject({
      level: z
        .string({ error: 'must be a string' })
        .transform((v) => v.toLowerCase())
        .pipe(z.enum(LEVEL_NAMES, { error: `must be one of ${LEVEL_NAMES.join(', ')}` })),
    })
    .optional(),
  service_configs: serviceConfigsSchema,
});

export interface ResourceEntry {
  /** Where the entry sits in the config, e.g. `components[1]`. */
  path: string;
  name: string;
  api: string;
  model: string;
  attributes: Record<string, unknown>;
  dependsOn: string[];
  logLevel?: LevelName;
  /** Per-resource settings of services, e.g. what the data manager captures (config/service-configs.ts). */
  serviceConfigs: ServiceConfig[];
  /** Set when the entry itself is invalid; such an entry is reported but never built. */
  error?: ConfigError;
}

type Section = 'components' | 'services';

function parseEntry(raw: unknown, section: Section, index: number): ResourceEntry {
  const path = `${section}[${index}]`;
  const rawName = typeof (raw as { name?: unknown })?.name === 'string' ? (raw as { name: string }).name : '';
  const fallback = {
    path,
    name: rawName || path,
    api: String((raw as { api?: unknown })?.api ?? ''),
    model: String((raw as { model?: unknown })?.model ?? ''),
    attributes: {},
    dependsOn: [],
    serviceConfigs: [],
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ...fallback, error: new ConfigError(path, 'must be an object with name, api and model') };
  }
  const result = envelope.safeParse(raw);
  if (!result.success) return { ...fallback, error: configErrorsFromZod(result.error, path, raw)[0] };
  const entry = result.data;
  const base: ResourceEntry = {
    path,
    name: entry.name,
    api: entry.api,
    model: entry.model,
    attributes: entry.attributes,
    dependsOn: entry.depends_on,
    logLevel: entry.log_configuration?.level,
    serviceConfigs: entry.service_configs,
  };
  try {
    const api = parseApi(entry.api, `${path}.api`);
    const kind = section === 'components' ? 'component' : 'service';
    if (api.kind !== kind) throw new ConfigError(`${path}.api`, `a ${section} entry must have kind ${kind}`, entry.api);
    checkModelName(entry.model, `${path}.model`);
    entry.depends_on.forEach((dep, i) => {
      if (dep === entry.name) throw new ConfigError(`${path}.depends_on[${i}]`, 'a resource cannot depend on itself', dep);
    });
  } catch (err) {
    if (err instanceof ConfigError) return { ...base, error: err };
    throw err;
  }
  return base;
}

/**
 * Parses every component and service entry. Names are unique across the machine (depends_on refers to
 * resources by name alone): a later entry reusing a name gets an error naming the first one.
 */
export function parseResourceEntries(components: unknown[], services: unknown[]): ResourceEntry[] {
  const entries = [...components.map((raw, i) => parseEntry(raw, 'components', i)), ...services.map((raw, i) => parseEntry(raw, 'services', i))];
  const firstByName = new Map<string, ResourceEntry>();
  for (const entry of entries) {
    const first = firstByName.get(entry.name);
    if (!first) {
      firstByName.set(entry.name, entry);
    } else if (!entry.error) {
      entry.error = new ConfigError(`${entry.path}.name`, `duplicate name, already used by ${first.path}`, entry.name);
    }
  }
  return entries;
}
