// The `agent` object of the machine configuration (SPEC.md "Agent configuration"), with every default
// and range of the spec. Unknown keys are rejected so that a typo does not silently fall back to a default.
import * as z from 'zod';
import { isIPv4 } from 'node:net';
import { parseConfig } from '../../plugins/validation.js';
import { parseVersionSpec, VersionSpecError } from './version-spec.js';

/** The provisioning hotspot's password when the manufacturer sets none (WPA2 needs 8 to 63 characters). */
export const DEFAULT_HOTSPOT_PASSWORD = 'platform';

const versionString = z.string({ error: 'must be a string' }).superRefine((value, ctx) => {
  try {
    parseVersionSpec(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof VersionSpecError ? err.rule : String(err) });
  }
});

const bool = (fallback: boolean) => z.boolean({ error: 'must be true or false' }).default(fallback);
const int = () => z.int({ error: 'must be an integer' });
const minutes = (fallback: number, min: number) =>
  int()
    .min(min, { error: `must be at least ${min}` })
    .default(fallback);
const text = (fallback: string) => z.string({ error: 'must be a string' }).default(fallback);

export const versionControlSchema = z.strictObject({
  agent: versionString.default('stable'),
  'platform-server': versionString.default('stable'),
});

// A record's own error would also replace its key errors; keep the key rule's message instead.
function recordError(typeRule: string) {
  return (issue: { code?: string; issues?: { message: string }[] }) => (issue.code === 'invalid_key' && issue.issues?.[0] ? issue.issues[0].message : typeRule);
}

// Names that a process environment can hold: no '=' (it separates name and value) and no NUL.
const envName = z
  .string()
  .min(1, { error: 'environment variable names must not be empty' })
  .regex(/^[^=\0]+$/, { error: 'environment variable names must not contain "=" or NUL' });

export const advancedSettingsSchema = z.strictObject({
  debug: bool(false),
  disable_network_configuration: bool(false),
  disable_system_configuration: bool(false),
  disable_platform_server: bool(false),
  platform_server_env: z
    .record(
      envName,
      z.string({ error: 'environment variable values must be strings' }).regex(/^[^\0]*$/, {
        error: 'environment variable values must not contain NUL',
      }),
      { error: recordError('must be an object of string to string') },
    )
    .default({}),
  platform_server_start_timeout_minutes: minutes(10, 1),
  wait_for_update_check: bool(false),
});

export const networkConfigurationSchema = z.strictObject({
  device_reboot_after_offline_minutes: minutes(0, 0),
  disable_captive_portal_redirect: bool(false),
  fragment_id: z.string({ error: 'must be a string' }).optional(),
  hotspot_interface: z.string({ error: 'must be a string' }).optional(),
  hotspot_password: z
    .string({ error: 'must be a string' })
    .min(8, { error: 'must be 8 to 63 characters (WPA2)' })
    .max(63, { error: 'must be 8 to 63 characters (WPA2)' })
    .default(DEFAULT_HOTSPOT_PASSWORD),
  hotspot_prefix: text('platform-setup'),
  manufacturer: text('platform'),
  model: text('custom'),
  offline_before_starting_hotspot_minutes: minutes(2, 0),
  retry_connection_timeout_minutes: minutes(10, 1),
  turn_on_hotspot_if_wifi_has_no_internet: bool(false),
  user_idle_minutes: minutes(5, 0),
  wifi_power_save: z.boolean({ error: 'must be true or false' }).optional(),
});

function isCidr(value: string): boolean {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(value);
  return !!m && isIPv4(m[1]) && Number(m[2]) <= 32;
}

const ipv4 = z.string({ error: 'must be a string' }).refine((v) => isIPv4(v), { error: 'must be an IPv4 address' });

export const additionalNetworkSchema = z
  .strictObject({
    type: z.enum(['wifi', 'wired'], { error: 'is required and must be "wifi" or "wired"' }),
    interface: text(''),
    ssid: text(''),
    psk: text(''),
    priority: int().min(-999, { error: 'must be between -999 and 999' }).max(999, { error: 'must be between -999 and 999' }).default(0),
    ipv4_address: z
      .string({ error: 'must be a string' })
      .refine((v) => v === 'auto' || isCidr(v), { error: 'must be "auto" or an IPv4 address in CIDR format <ip>/<prefix>' })
      .default('auto'),
    ipv4_gateway: z
      .string({ error: 'must be a string' })
      .refine((v) => v === '' || isIPv4(v), { error: 'must be empty or an IPv4 address' })
      .default(''),
    ipv4_dns: z.array(ipv4, { error: 'must be an array of IPv4 addresses' }).default([]),
    ipv4_route_metric: int().min(0, { error: 'must be at least 0 (0 means 100 wired, 600 wireless)' }).default(0),
  })
  .superRefine((net, ctx) => {
    if (net.type === 'wired' && net.ssid !== '') {
      ctx.addIssue({ code: 'custom', path: ['ssid'], message: 'applies to wifi networks only' });
    }
    // An SSID is 1 to 32 bytes (IEEE 802.11); a longer one could never be joined.
    const ssidBytes = Buffer.byteLength(net.ssid, 'utf8');
    if (net.type === 'wifi' && ssidBytes === 0) ctx.addIssue({ code: 'custom', path: ['ssid'], message: 'is required for a wifi network' });
    if (ssidBytes > 32) ctx.addIssue({ code: 'custom', path: ['ssid'], message: `must be at most 32 bytes (is ${ssidBytes})` });
    if (net.type === 'wifi' && net.psk !== '' && (net.psk.length < 8 || net.psk.length > 63))
      ctx.addIssue({ code: 'custom', path: ['psk'], message: 'must be empty (open network) or 8 to 63 characters (WPA2)' });
  });

// Each entry is a journal identifier, optionally negated with '-', or `all`.
const forwardLogs = z
  .string({ error: 'must be a string' })
  .refine((v) => v === '' || v.split(',').every((part) => /^-?[^\s,-][^\s,]*$/.test(part.trim())), {
    error: 'must be a comma-separated list of log identifiers, each optionally prefixed with "-", or "all"',
  })
  .default('');

const journaldLimit = int()
  .refine((v) => v === -1 || v >= 0, { error: 'must be -1 (disabled) or at least 0' })
  .default(512);

export const systemConfigurationSchema = z.strictObject({
  forward_system_logs: forwardLogs,
  logging_journald_runtime_max_use_megabytes: journaldLimit,
  logging_journald_system_max_use_megabytes: journaldLimit,
  os_auto_upgrade_type: z.enum(['', 'all', 'security', 'disable'], { error: 'must be "all", "security", "disable" or empty' }).default(''),
});

// `prefault` (not `default`) so that an absent section is parsed as {} and gets its fields' defaults.
export const agentConfigSchema = z
  .strictObject(
    {
      version_control: versionControlSchema.prefault({}),
      advanced_settings: advancedSettingsSchema.prefault({}),
      network_configuration: networkConfigurationSchema.prefault({}),
      additional_networks: z
        .record(z.string().min(1, { error: 'network keys must not be empty' }), additionalNetworkSchema, {
          error: recordError('must be an object mapping a network key to a network'),
        })
        .default({}),
      system_configuration: systemConfigurationSchema.prefault({}),
    },
    { error: 'must be an object' },
  )
  .prefault({});

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;

/** Validates an `agent` object (absent means all defaults); throws a ConfigError naming field and rule. */
export function parseAgentConfig(input: unknown, basePath = 'agent'): AgentConfig {
  return parseConfig(agentConfigSchema, input, basePath);
}
