// Builds the NetworkManager profiles from the agent config: additional_networks become client
// profiles with their priority, and the hotspot profile is derived from network_configuration and the
// hostname. Wi-Fi limits are checked here with errors that name the field (the config schema checks
// them too; a network submitted through provisioning comes here directly).
import type { AgentConfig } from '../../config/agent-config.js';
import type { ClientProfile, HotspotProfile, Profile } from './backend.js';
import { NetworkInputError } from '../../serving/errors.js';
export { NetworkInputError };

export const PROFILE_PREFIX = 'platform-';
export const HOTSPOT_ID = `${PROFILE_PREFIX}hotspot`;
/** Profiles of additional_networks: removed again when their key leaves the config. */
export const CONFIG_PROFILE_PREFIX = `${PROFILE_PREFIX}net-`;
/** Profiles of networks submitted during provisioning: kept until replaced. */
export const USER_PROFILE_PREFIX = `${PROFILE_PREFIX}user-`;
export const MAX_SSID_BYTES = 32;
export const PRIORITY_MIN = -999;
export const PRIORITY_MAX = 999;

type AdditionalNetwork = AgentConfig['additional_networks'][string];

export function checkSsid(field: string, ssid: string): void {
  const bytes = Buffer.byteLength(ssid, 'utf8');
  if (bytes === 0) throw new NetworkInputError(field, 'is required for a wifi network');
  if (bytes > MAX_SSID_BYTES) throw new NetworkInputError(field, `must be at most ${MAX_SSID_BYTES} bytes (is ${bytes})`);
}

export function checkPriority(field: string, priority: number): void {
  if (!Number.isInteger(priority) || priority < PRIORITY_MIN || priority > PRIORITY_MAX)
    throw new NetworkInputError(field, `must be an integer between ${PRIORITY_MIN} and ${PRIORITY_MAX} (is ${priority})`);
}

export function checkPsk(field: string, psk: string): void {
  if (psk !== '' && (psk.length < 8 || psk.length > 63)) throw new NetworkInputError(field, 'must be empty (open network) or 8 to 63 characters (WPA2)');
}

/** One additional_networks entry as a client profile `platform-net-<key>`. */
export function clientProfileOf(key: string, net: AdditionalNetwork, base = 'additional_networks'): ClientProfile {
  const field = `${base}.${key}`;
  if (net.type === 'wifi') {
    checkSsid(`${field}.ssid`, net.ssid);
    checkPsk(`${field}.psk`, net.psk);
  }
  checkPriority(`${field}.priority`, net.priority);
  return {
    kind: 'client',
    id: `${CONFIG_PROFILE_PREFIX}${key}`,
    type: net.type,
    interface: net.interface,
    ssid: net.type === 'wifi' ? net.ssid : '',
    psk: net.type === 'wifi' ? net.psk : '',
    priority: net.priority,
    ipv4: net.ipv4_address === 'auto' ? { method: 'auto' } : { method: 'manual', address: net.ipv4_address, gateway: net.ipv4_gateway, dns: net.ipv4_dns },
    routeMetric: net.ipv4_route_metric,
  };
}

/** A Wi-Fi network submitted during provisioning (portal or gRPC), as profile `platform-user-<ssid>`. */
export function userProfileOf(ssid: string, psk: string, priority = 0): ClientProfile {
  checkSsid('ssid', ssid);
  checkPsk('psk', psk);
  checkPriority('priority', priority);
  return {
    kind: 'client',
    id: `${USER_PROFILE_PREFIX}${ssid}`,
    type: 'wifi',
    interface: '',
    ssid,
    psk,
    priority,
    ipv4: { method: 'auto' },
    routeMetric: 0,
  };
}

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
function cutBytes(s: string, max: number): string {
  let out = '';
  for (const ch of s) {
    if (Buffer.byteLength(out + ch, 'utf8') > max) break;
    out += ch;
  }
  return out;
}

/** `<hotspot_prefix>-<hostname>`, cut to the 32 bytes an SSID may have. */
export function hotspotProfileOf(config: AgentConfig['network_configuration'], hostname: string): HotspotProfile {
  return {
    kind: 'hotspot',
    id: HOTSPOT_ID,
    interface: config.hotspot_interface ?? '',
    ssid: cutBytes(`${config.hotspot_prefix}-${hostname}`, MAX_SSID_BYTES),
    psk: config.hotspot_password,
    ipv4: { method: 'shared', address: '10.42.0.1/24' },
    ipv6: 'disabled',
    autoconnect: false,
    ...(config.wifi_power_save === undefined ? {} : { powerSave: config.wifi_power_save }),
  };
}

/**
 * SPEC.md's wifi_power_save for a managed Wi-Fi profile: set explicitly, or (undefined) left to the
 * system's default, in which case the key is absent so that profiles compare equal to what is read back.
 */
export function withPowerSave<P extends Profile>(p: P, powerSave: boolean | undefined): P {
  if (p.kind === 'client' && p.type !== 'wifi') return p;
  const { powerSave: _old, ...rest } = p;
  return (powerSave === undefined ? rest : { ...rest, powerSave }) as P;
}
