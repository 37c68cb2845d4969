// Profiles as NetworkManager connection settings (a{sa{sv}}) and back. Only what the agent sets is
// read back; secrets are not part of GetSettings on a real NetworkManager, so a psk may read back empty.
import { randomUUID } from 'node:crypto';
import dbus from 'dbus-next';
import type { ClientProfile, HotspotProfile, Ipv4Config, Profile } from './backend.js';

const { Variant } = dbus;
// NMSettingWirelessPowersave: 0 default (NetworkManager.conf decides), 1 ignore, 2 disable, 3 enable.
const POWERSAVE_DEFAULT = 0;
const POWERSAVE_DISABLE = 2;
const POWERSAVE_ENABLE = 3;
type Settings = Record<string, Record<string, InstanceType<typeof Variant>>>;
/** What GetSettings answers: variants unwrapped by dbus-next into { signature, value }. */
type RawSettings = Record<string, Record<string, { value: unknown }>>;

// NetworkManager's `dns` is an array of IPv4 addresses as uint32 in network byte order.
function dnsToUint(ip: string): number {
  const [a, b, c, d] = ip.split('.').map(Number);
  return (a | (b << 8) | (c << 16) | (d << 24)) >>> 0;
}

function uintToDns(n: number): string {
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255].join('.');
}

export function toNmSettings(p: Profile, uuid: string = randomUUID()): Settings {
  const wifi = p.kind === 'hotspot' || p.type === 'wifi';
  const connection: Settings[string] = {
    id: new Variant('s', p.id),
    uuid: new Variant('s', uuid),
    type: new Variant('s', wifi ? '802-11-wireless' : '802-3-ethernet'),
    autoconnect: new Variant('b', p.kind === 'client'),
    'autoconnect-priority': new Variant('i', p.kind === 'client' ? p.priority : 0),
  };
  if (p.interface) connection['interface-name'] = new Variant('s', p.interface);
  const s: Settings = { connection };
  if (wifi) {
    s['802-11-wireless'] = { ssid: new Variant('ay', Buffer.from(p.ssid, 'utf8')), mode: new Variant('s', p.kind === 'hotspot' ? 'ap' : 'infrastructure') };
    // Written even when not set (0, NetworkManager.conf decides): an Update that leaves a key out keeps the
    // old value on some implementations, so turning wifi_power_save off again must say so.
    s['802-11-wireless'].powersave = new Variant('u', p.powerSave === undefined ? POWERSAVE_DEFAULT : p.powerSave ? POWERSAVE_ENABLE : POWERSAVE_DISABLE);
  }
  if (wifi && p.psk) s['802-11-wireless-security'] = { 'key-mgmt': new Variant('s', 'wpa-psk'), psk: new Variant('s', p.psk) };
  if (p.kind === 'hotspot') {
    s.ipv4 = {
      method: new Variant('s', 'shared'),
      'address-data': new Variant('aa{sv}', [{ address: new Variant('s', '10.42.0.1'), prefix: new Variant('u', 24) }]),
    };
    s.ipv6 = { method: new Variant('s', 'disabled') };
    return s;
  }
  const ipv4: Settings[string] = { method: new Variant('s', p.ipv4.method) };
  if (p.ipv4.method === 'manual') {
    const [address, prefix] = p.ipv4.address.split('/');
    ipv4['address-data'] = new Variant('aa{sv}', [{ address: new Variant('s', address), prefix: new Variant('u', Number(prefix)) }]);
    if (p.ipv4.gateway) ipv4.gateway = new Variant('s', p.ipv4.gateway);
    if (p.ipv4.dns.length) ipv4.dns = new Variant('au', p.ipv4.dns.map(dnsToUint));
  }
  if (p.routeMetric > 0) ipv4['route-metric'] = new Variant('x', BigInt(p.routeMetric));
  s.ipv4 = ipv4;
  return s;
}

const val = <T>(s: RawSettings, group: string, key: string): T | undefined => s[group]?.[key]?.value as T | undefined;

/** The profile a connection holds, or undefined for one this agent does not manage. */
export function fromNmSettings(s: RawSettings): Profile | undefined {
  const id = val<string>(s, 'connection', 'id') ?? '';
  if (!id.startsWith('platform-')) return undefined;
  const ssidBytes = val<Buffer | number[]>(s, '802-11-wireless', 'ssid');
  const ssid = ssidBytes ? Buffer.from(ssidBytes).toString('utf8') : '';
  const psk = val<string>(s, '802-11-wireless-security', 'psk') ?? '';
  const iface = val<string>(s, 'connection', 'interface-name') ?? '';
  const method = val<string>(s, 'ipv4', 'method') ?? 'auto';
  const powersave = Number(val<number>(s, '802-11-wireless', 'powersave') ?? 0);
  // Only a value this agent sets is read back; the key is absent otherwise, as in the profiles it builds.
  const powerSave = powersave === POWERSAVE_ENABLE ? { powerSave: true } : powersave === POWERSAVE_DISABLE ? { powerSave: false } : {};
  if (val<string>(s, '802-11-wireless', 'mode') === 'ap' || method === 'shared') {
    const hotspot: HotspotProfile = {
      kind: 'hotspot',
      id,
      interface: iface,
      ssid,
      psk,
      ipv4: { method: 'shared', address: '10.42.0.1/24' },
      ipv6: 'disabled',
      autoconnect: false,
      ...powerSave,
    };
    return hotspot;
  }
  let ipv4: Ipv4Config = { method: 'auto' };
  if (method === 'manual') {
    const addr = val<{ address: { value: string }; prefix: { value: number } }[]>(s, 'ipv4', 'address-data')?.[0];
    ipv4 = {
      method: 'manual',
      address: addr ? `${addr.address.value}/${addr.prefix.value}` : '',
      gateway: val<string>(s, 'ipv4', 'gateway') ?? '',
      dns: (val<number[]>(s, 'ipv4', 'dns') ?? []).map(uintToDns),
    };
  }
  const client: ClientProfile = {
    kind: 'client',
    id,
    type: val<string>(s, 'connection', 'type') === '802-3-ethernet' ? 'wired' : 'wifi',
    interface: iface,
    ssid,
    psk,
    priority: val<number>(s, 'connection', 'autoconnect-priority') ?? 0,
    ipv4,
    routeMetric: Number(val<bigint | number>(s, 'ipv4', 'route-metric') ?? 0),
    ...powerSave,
  };
  return client;
}
