// The machine configuration (SPEC.md "Machine configuration (top level)"). Top-level errors reject the
// whole config; resource entries are kept raw here and validated one by one (config/resource-entry.ts),
// so that one bad resource does not stop the others.
import validRange from 'semver/ranges/valid.js';
import * as z from 'zod';
import { configErrorsFromZod, ConfigError } from '../../plugins/validation.js';
import { compileLogPattern, LEVEL_NAMES } from './log-rules.js';
import { agentConfigSchema } from './agent-config.js';
import { DEFAULT_HEARTBEAT_WINDOW, sessionConfigSchema } from './session-config.js';
import { packagesSection } from './package-config.js';
import { tracingConfigSchema } from './tracing-config.js';
import { InvalidConfigError } from '../serving/errors.js';
export { InvalidConfigError };

export const DEFAULT_BIND_ADDRESS = 'localhost:8080';

const levelName = z
  .string({ error: 'must be a string' })
  .transform((v) => v.toLowerCase())
  .pipe(z.enum(LEVEL_NAMES, { error: `must be one of ${LEVEL_NAMES.join(', ')}` }));

const logRule = z.strictObject({
  pattern: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .superRefine((pattern, ctx) => {
      try {
        compileLogPattern(pattern);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `must be a valid regular expression (${(err as Error).message})` });
      }
    }),
  level: levelName,
});

const moduleEntry = z.strictObject({
  module_id: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/, 'must have the shape <namespace>:<name>'),
  // A version pins exactly (1.2.0); a semver range (^1.2) takes the highest matching folder.
  version: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .refine((v) => validRange(v) !== null, 'must be a semantic version such as 1.2.0 or a range such as ^1.2'),
  log_level: levelName.optional(),
});

const moduleEntries = z.array(moduleEntry, { error: 'must be an array' }).superRefine((entries, ctx) => {
  const first = new Map<string, number>();
  entries.forEach((entry, i) => {
    const at = first.get(entry.module_id);
    if (at === undefined) first.set(entry.module_id, i);
    else ctx.addIssue({ code: 'custom', path: [i, 'module_id'], message: `duplicate module, already listed at modules[${at}]` });
  });
});

const maintenance = z.strictObject({
  sensor_name: z
    .string({ error: 'is required and must be a string' })
    .regex(/^[A-Za-z0-9_-]+:component:sensor\/[A-Za-z0-9][A-Za-z0-9_-]*$/, 'must have the shape <namespace>:component:sensor/<name>'),
  maintenance_allowed_key: z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty'),
});

const hostPort = z
  .string({ error: 'must be a string' })
  .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):\d{1,5}$/, { message: 'must have the shape host:port, e.g. localhost:8080 or 0.0.0.0:8080', abort: true })
  .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'port must be at most 65535');

const network = z
  .strictObject({
    bind_address: hostPort.default(DEFAULT_BIND_ADDRESS),
    /** The control page's HTTP port (core/web/README.md); by default bind_address's host and port + 1. */
    web_bind_address: hostPort.optional(),
    /** More names the control page answers to (core/web/README.md: DNS rebinding); `*` for any. */
    web_allowed_hosts: z
      .array(z.string({ error: 'must be a string' }).regex(/^(\*|\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)$/, 'must be a host name or address without port, or *'), {
        error: 'must be an array of host names',
      })
      .optional(),
    /** TLS is used when both files are set, unless -no-tls is given. */
    tls_cert_file: z.string().min(1).optional(),
    tls_key_file: z.string().min(1).optional(),
  })
  .superRefine((n, ctx) => {
    if (Boolean(n.tls_cert_file) === Boolean(n.tls_key_file)) return;
    const missing = n.tls_cert_file ? 'tls_key_file' : 'tls_cert_file';
    ctx.addIssue({ code: 'custom', path: [missing], message: 'tls_cert_file and tls_key_file must be set together' });
  });

// Machine credentials: the part id with its part secret, or with an API key (the form platform-agent
// writes from PLATFORM_API_KEY_ID / PLATFORM_API_KEY / PLATFORM_PART_ID, SPEC.md Authentication item 4).
const cloud = z
  .strictObject({
    id: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
    secret: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    api_key: z
      .strictObject({
        id: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
        key: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
      })
      .optional(),
    app_address: z.string().optional(),
  })
  .refine((c) => !!c.secret !== !!c.api_key, { error: 'needs either secret or api_key {id, key}', path: ['secret'] });

const entries = z.array(z.unknown(), { error: 'must be an array of resource entries' }).default([]);

export const machineConfigSchema = z.strictObject({
  components: entries,
  services: entries,
  modules: moduleEntries.default([]),
  module_dir: z.string().min(1).optional(),
  maintenance: maintenance.optional(),
  log: z.array(logRule, { error: 'must be an array of log rules' }).default([]),
  disable_log_deduplication: z.boolean({ error: 'must be true or false' }).default(false),
  debug: z.boolean({ error: 'must be true or false' }).default(false),
  network: network.default({ bind_address: DEFAULT_BIND_ADDRESS }),
  agent: agentConfigSchema.optional(),
  cloud: cloud.optional(),
  /** Packages to install (core/packages/README.md); attributes refer to them as ${packages.NAME}. */
  packages: packagesSection,
  session: sessionConfigSchema.default({ heartbeat_window: DEFAULT_HEARTBEAT_WINDOW }),
  /** OpenTelemetry spans (core/config/tracing-config.ts); read at start. */
  tracing: tracingConfigSchema.optional(),
});

export type MachineConfig = z.output<typeof machineConfigSchema>;
export type ModuleEntry = z.output<typeof moduleEntry>;
export type Maintenance = z.output<typeof maintenance>;

/** Parses the top level of a machine config. Throws InvalidConfigError listing every top-level error. */
export function parseMachineConfig(input: unknown): MachineConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidConfigError([new ConfigError('(config)', 'must be a JSON object')]);
  }
  const result = machineConfigSchema.safeParse(input);
  if (!result.success) throw new InvalidConfigError(configErrorsFromZod(result.error, '', input));
  return result.data;
}

/** Parses JSON text, naming the position of a syntax error. */
export function parseMachineConfigText(text: string, source = 'config'): MachineConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InvalidConfigError([new ConfigError(source, `is not valid JSON: ${(err as Error).message}`)]);
  }
  return parseMachineConfig(json);
}
