// What the provisioning state machine needs from the machine's network stack. The NetworkManager
// implementation speaks D-Bus; tests use the in-memory FakeNetworkBackend (testing/fake-network.ts).

/** NetworkManager's connectivity states, after a connectivity check. Only `full` is online. */
export type Connectivity = 'unknown' | 'none' | 'portal' | 'limited' | 'full';

export type WifiSecurity = 'open' | 'wep' | 'wpa-psk' | 'sae' | 'wpa-eap';

export interface VisibleNetwork {
  ssid: string;
  security: WifiSecurity;
  /** 0-100 */
  signal: number;
  connected: boolean;
}

export type Ipv4Config = { method: 'auto' } | { method: 'manual'; address: string; gateway: string; dns: string[] };

/** A Wi-Fi (infrastructure) or wired network the machine connects to by itself. */
export interface ClientProfile {
  kind: 'client';
  /** Stable connection id: `platform-net-<key>` for additional_networks, `platform-user-<ssid>` when provisioned. */
  id: string;
  type: 'wifi' | 'wired';
  /** '' lets NetworkManager pick the device. */
  interface: string;
  ssid: string;
  /** '' for an open network. */
  psk: string;
  /** autoconnect-priority, -999..999. */
  priority: number;
  ipv4: Ipv4Config;
  /** 0: NetworkManager's default (100 wired, 600 wireless). */
  routeMetric: number;
  /** Wi-Fi power save from network_configuration.wifi_power_save; absent: the system's default. */
  powerSave?: boolean;
}

/** The provisioning access point: WPA-PSK, IPv4 shared at 10.42.0.1/24, IPv6 disabled, never autoconnect. */
export interface HotspotProfile {
  kind: 'hotspot';
  id: string;
  interface: string;
  ssid: string;
  psk: string;
  ipv4: { method: 'shared'; address: '10.42.0.1/24' };
  ipv6: 'disabled';
  autoconnect: false;
  /** As ClientProfile.powerSave. */
  powerSave?: boolean;
}

export type Profile = ClientProfile | HotspotProfile;

export interface NetworkBackend {
  /** Runs a connectivity check and answers its result. */
  connectivity(): Promise<Connectivity>;
  /** Asks for a Wi-Fi scan and lists what is visible, one entry per SSID (the strongest). */
  scan(): Promise<VisibleNetwork[]>;
  /** The profiles this agent manages (id starting with `platform-`). */
  profiles(): Promise<Profile[]>;
  /** Adds the profile, or replaces the settings of the one with the same id. */
  upsertProfile(profile: Profile): Promise<void>;
  removeProfile(id: string): Promise<void>;
  /** Activates the profile; resolves false (with the reason logged by the caller) when it did not connect. */
  activate(id: string): Promise<{ ok: true } | { ok: false; error: string }>;
  deactivate(id: string): Promise<void>;
  hostname(): Promise<string>;
  /**
   * Calls onChange whenever the network's state may have changed (NetworkManager's signals), so that a
   * change is acted on at once rather than at the next check. Resolves with the function that stops it.
   * Optional: a backend without it is only checked on the timer.
   */
  watch?(onChange: () => void): Promise<() => Promise<void>>;
}
