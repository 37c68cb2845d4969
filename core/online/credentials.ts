// The -config file of an online machine: only cloud credentials (the shape platform-agent writes),
// `{"cloud": {"id", "secret" | "api_key": {id, key}, "app_address"}}`, optionally with `network` (this
// machine's own bind address and TLS, which win over the cloud config's). A file that also holds
// resources, modules or an `agent` object is a full local config and runs offline, as before.
import { partCredentials, type CloudLinkSettings } from '../cloud-link/link-settings.js';
import type { MachineConfig } from '../config/machine-config.js';

const LOCAL_KEYS = ['components', 'services', 'modules', 'agent', 'maintenance', 'log', 'module_dir'];

/**
 * The link settings when `raw` is a credentials file (online mode); undefined for a full local config.
 * A missing app_address is kept empty, so that the link refuses it by name.
 */
export function onlineCredentials(raw: unknown, config: MachineConfig, allowInsecure: boolean): CloudLinkSettings | undefined {
  if (!config.cloud || raw === null || typeof raw !== 'object') return undefined;
  if (LOCAL_KEYS.some((k) => k in (raw as Record<string, unknown>))) return undefined;
  const c = config.cloud;
  return { partId: c.id, appAddress: c.app_address ?? '', credentials: partCredentials(c), allowInsecure };
}
