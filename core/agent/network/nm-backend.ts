// NetworkBackend over NetworkManager's D-Bus API (org.freedesktop.NetworkManager), with dbus-next.
// The agent loads this module only when it runs the network, so an agent without it stays small.
import dbus from 'dbus-next';
import type { ClientInterface, MessageBus, ProxyObject } from 'dbus-next';
import type { Connectivity, NetworkBackend, Profile, VisibleNetwork, WifiSecurity } from './backend.js';
import { fromNmSettings, toNmSettings } from './nm-settings.js';

const NM = 'org.freedesktop.NetworkManager';
const NM_PATH = '/org/freedesktop/NetworkManager';
const SETTINGS_PATH = `${NM_PATH}/Settings`;
const PROPS = 'org.freedesktop.DBus.Properties';
const DEVICE_TYPE_WIFI = 2;
const ACTIVE_STATE_ACTIVATED = 2;
const ACTIVE_STATE_DEACTIVATED = 4;
const NM_STATE_CONNECTED_LOCAL = 50;
const NM_STATE_CONNECTED_GLOBAL = 70;
const CONNECTIVITY: Connectivity[] = ['unknown', 'none', 'portal', 'limited', 'full'];
/** The manager's properties whose change may change the online state. */
const WATCHED_PROPERTIES = new Set(['Connectivity', 'State', 'PrimaryConnection']);

// NM80211ApSecurityFlags: key management bits of WpaFlags/RsnFlags.
const KEY_MGMT_PSK = 0x100;
const KEY_MGMT_8021X = 0x200;
const KEY_MGMT_SAE = 0x400;

export function securityOf(flags: number, wpaFlags: number, rsnFlags: number): WifiSecurity {
  const all = wpaFlags | rsnFlags;
  if (all & KEY_MGMT_8021X) return 'wpa-eap';
  if (all & KEY_MGMT_SAE && !(all & KEY_MGMT_PSK)) return 'sae';
  if (all !== 0) return 'wpa-psk';
  return flags & 1 ? 'wep' : 'open';
}

export interface NmBackendOptions {
  bus: MessageBus;
  /** How long an activation may take before it counts as failed (ms). */
  activationTimeoutMs?: number;
}

export class NetworkManagerBackend implements NetworkBackend {
  private readonly bus: MessageBus;

  constructor(private readonly opts: NmBackendOptions) {
    this.bus = opts.bus;
  }

  /** The system bus's NetworkManager, or undefined when it is not running there. */
  static async onSystemBus(onError: (err: Error) => void): Promise<NetworkManagerBackend | undefined> {
    const bus = dbus.systemBus();
    // A bus that cannot connect or drops later reports here, not as an uncaught 'error' event.
    bus.on('error', onError);
    try {
      const backend = new NetworkManagerBackend({ bus });
      await backend.iface(NM_PATH, NM);
      return backend;
    } catch {
      bus.disconnect();
      return undefined;
    }
  }

  close(): void {
    this.bus.disconnect();
  }

  /**
   * The manager's and the settings' objects live as long as NetworkManager does: their proxies (each an
   * Introspect round trip to build) are kept. Calls go to the bus name, so a restarted NetworkManager
   * answers them too. Other objects (devices, connections, access points) come and go and are looked
   * up each time.
   */
  private readonly lasting = new Map<string, Promise<ProxyObject>>();

  private async iface(path: string, name: string): Promise<ClientInterface> {
    let obj: Promise<ProxyObject> | undefined = this.lasting.get(path);
    if (!obj) {
      obj = this.bus.getProxyObject(NM, path);
      if (path === NM_PATH || path === SETTINGS_PATH) {
        this.lasting.set(path, obj);
        obj.catch(() => this.lasting.delete(path)); // not up yet: built again next time
      }
    }
    return (await obj).getInterface(name);
  }

  /**
   * org.freedesktop.DBus.Properties is the same on every object: its calls go as plain messages, with no
   * Introspect round trip for a proxy first (a scan reads every access point's properties).
   */
  private async props(path: string, member: 'Get' | 'GetAll', signature: string, body: string[]): Promise<unknown> {
    const reply = await this.bus.call(new dbus.Message({ destination: NM, path, interface: PROPS, member, signature, body }));
    return reply?.body[0];
  }

  private async prop<T>(path: string, iface: string, name: string): Promise<T> {
    return ((await this.props(path, 'Get', 'ss', [iface, name])) as { value: T }).value;
  }

  async connectivity(): Promise<Connectivity> {
    const nm = await this.iface(NM_PATH, NM);
    const state = CONNECTIVITY[(await nm.CheckConnectivity()) as number] ?? 'unknown';
    if (state !== 'unknown') return state;
    // Unknown means connectivity checking is off (Debian's default without a check URI): NetworkManager's
    // own state then says whether there is a global connection. Taking unknown for offline would raise
    // the hotspot on a machine that is online.
    const global = await this.prop<number>(NM_PATH, NM, 'State');
    if (global >= NM_STATE_CONNECTED_GLOBAL) return 'full';
    return global >= NM_STATE_CONNECTED_LOCAL ? 'limited' : 'none';
  }

  async scan(): Promise<VisibleNetwork[]> {
    const nm = await this.iface(NM_PATH, NM);
    const best = new Map<string, VisibleNetwork>();
    for (const dev of (await nm.GetDevices()) as string[]) {
      if ((await this.prop<number>(dev, `${NM}.Device`, 'DeviceType')) !== DEVICE_TYPE_WIFI) continue;
      const wifi = await this.iface(dev, `${NM}.Device.Wireless`);
      // A scan already running answers an error; the list from the last scan is still good.
      await wifi.RequestScan({}).catch(() => undefined);
      const active = await this.activeAccessPoint(dev);
      for (const ap of (await wifi.GetAllAccessPoints()) as string[]) {
        const props = (await this.props(ap, 'GetAll', 's', [`${NM}.AccessPoint`])) as Record<string, { value: unknown }>;
        const ssid = Buffer.from(props.Ssid.value as Buffer).toString('utf8');
        if (!ssid) continue; // hidden networks
        const net: VisibleNetwork = {
          ssid,
          security: securityOf(Number(props.Flags.value), Number(props.WpaFlags.value), Number(props.RsnFlags.value)),
          signal: Number(props.Strength.value),
          connected: ap === active,
        };
        const seen = best.get(ssid);
        if (!seen || net.connected || (!seen.connected && net.signal > seen.signal)) best.set(ssid, net);
      }
    }
    return [...best.values()];
  }

  // The access point of the device's active connection ('/' when there is none).
  private async activeAccessPoint(dev: string): Promise<string> {
    const activeConn = await this.prop<string>(dev, `${NM}.Device`, 'ActiveConnection');
    if (!activeConn || activeConn === '/') return '/';
    return this.prop<string>(activeConn, `${NM}.Connection.Active`, 'SpecificObject').catch(() => '/');
  }

  private async connections(): Promise<{ path: string; raw: Parameters<typeof fromNmSettings>[0] }[]> {
    const settings = await this.iface(SETTINGS_PATH, `${NM}.Settings`);
    const out = [];
    for (const path of (await settings.ListConnections()) as string[]) {
      const conn = await this.iface(path, `${NM}.Settings.Connection`);
      out.push({ path, raw: (await conn.GetSettings()) as Parameters<typeof fromNmSettings>[0] });
    }
    return out;
  }

  private async pathOf(id: string): Promise<{ path: string; uuid: string } | undefined> {
    for (const c of await this.connections()) {
      if (c.raw.connection?.id?.value === id) return { path: c.path, uuid: String(c.raw.connection.uuid?.value) };
    }
    return undefined;
  }

  async profiles(): Promise<Profile[]> {
    return (await this.connections()).map((c) => fromNmSettings(c.raw)).filter((p): p is Profile => !!p);
  }

  async upsertProfile(profile: Profile): Promise<void> {
    const existing = await this.pathOf(profile.id);
    if (existing) {
      const conn = await this.iface(existing.path, `${NM}.Settings.Connection`);
      await conn.Update(toNmSettings(profile, existing.uuid));
    } else {
      const settings = await this.iface(SETTINGS_PATH, `${NM}.Settings`);
      await settings.AddConnection(toNmSettings(profile));
    }
  }

  async removeProfile(id: string): Promise<void> {
    const existing = await this.pathOf(id);
    if (existing) await (await this.iface(existing.path, `${NM}.Settings.Connection`)).Delete();
  }

  async activate(id: string): Promise<{ ok: true } | { ok: false; error: string }> {
    try {
      const existing = await this.pathOf(id);
      if (!existing) return { ok: false, error: `no connection profile ${id}` };
      const nm = await this.iface(NM_PATH, NM);
      const active = (await nm.ActivateConnection(existing.path, '/', '/')) as string;
      const deadline = Date.now() + (this.opts.activationTimeoutMs ?? 60_000);
      for (;;) {
        const state = await this.prop<number>(active, `${NM}.Connection.Active`, 'State').catch(() => ACTIVE_STATE_DEACTIVATED);
        if (state === ACTIVE_STATE_ACTIVATED) return { ok: true };
        if (state === ACTIVE_STATE_DEACTIVATED) return { ok: false, error: 'the connection was deactivated while activating' };
        if (Date.now() > deadline) return { ok: false, error: 'activation timed out' };
        await new Promise((r) => setTimeout(r, 500));
      }
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }

  async deactivate(id: string): Promise<void> {
    const existing = await this.pathOf(id);
    if (!existing) return;
    const nm = await this.iface(NM_PATH, NM);
    for (const active of await this.prop<string[]>(NM_PATH, NM, 'ActiveConnections')) {
      const conn = await this.prop<string>(active, `${NM}.Connection.Active`, 'Connection').catch(() => '');
      if (conn === existing.path) await nm.DeactivateConnection(active);
    }
  }

  /**
   * Match rules for NetworkManager's StateChanged and its PropertiesChanged (Connectivity, State,
   * PrimaryConnection), added on the bus daemon so that only those signals are delivered to us.
   */
  async watch(onChange: () => void): Promise<() => Promise<void>> {
    const rules = [
      `type='signal',sender='${NM}',path='${NM_PATH}',interface='${NM}',member='StateChanged'`,
      `type='signal',sender='${NM}',path='${NM_PATH}',interface='${PROPS}',member='PropertiesChanged',arg0='${NM}'`,
    ];
    const busCall = (member: 'AddMatch' | 'RemoveMatch', rule: string) =>
      this.bus.call(
        new dbus.Message({
          destination: 'org.freedesktop.DBus',
          path: '/org/freedesktop/DBus',
          interface: 'org.freedesktop.DBus',
          member,
          signature: 's',
          body: [rule],
        }),
      );
    const onMessage = (msg: InstanceType<typeof dbus.Message>) => {
      if (msg.type !== dbus.MessageType.SIGNAL || msg.path !== NM_PATH) return;
      if (msg.interface === NM && msg.member === 'StateChanged') onChange();
      else if (msg.interface === PROPS && msg.member === 'PropertiesChanged' && msg.body[0] === NM) {
        const changed = Object.keys((msg.body[1] ?? {}) as Record<string, unknown>);
        if (changed.some((k) => WATCHED_PROPERTIES.has(k))) onChange();
      }
    };
    this.bus.on('message', onMessage);
    try {
      for (const rule of rules) await busCall('AddMatch', rule);
    } catch (err) {
      this.bus.off('message', onMessage);
      throw err;
    }
    return async () => {
      this.bus.off('message', onMessage);
      for (const rule of rules) await busCall('RemoveMatch', rule).catch(() => undefined);
    };
  }

  async hostname(): Promise<string> {
    return this.prop<string>(SETTINGS_PATH, `${NM}.Settings`, 'Hostname');
  }
}
