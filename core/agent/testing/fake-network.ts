// An in-memory NetworkBackend: the networks in the air, a wired link, the profiles, which one is
// active, and the connectivity that follows from them. Every operation is recorded for assertions.
import type { Connectivity, NetworkBackend, Profile, VisibleNetwork, WifiSecurity } from '../network/backend.js';

export interface AirNetwork {
  ssid: string;
  security: WifiSecurity;
  signal: number;
  /** The passphrase that joins it ('' for open). */
  psk: string;
  /** false: joins, but the connectivity check finds no internet (`limited`). */
  internet: boolean;
}

export class FakeNetworkBackend implements NetworkBackend {
  readonly ops: string[] = [];
  readonly air = new Map<string, AirNetwork>();
  /** A cable with internet behind it; wired profiles connect only when it is set. */
  wiredInternet: boolean | undefined;
  readonly store = new Map<string, Profile>();
  active: string | undefined;
  host = 'robot1';

  addAir(n: Partial<AirNetwork> & { ssid: string }): void {
    this.air.set(n.ssid, { security: 'wpa-psk', signal: 50, psk: '', internet: true, ...n });
  }

  /** The network drops (out of range, router off): the active client profile is disconnected. */
  dropConnection(): void {
    if (this.active && this.store.get(this.active)?.kind === 'client') this.active = undefined;
  }

  async connectivity(): Promise<Connectivity> {
    const p = this.active ? this.store.get(this.active) : undefined;
    if (!p || p.kind === 'hotspot') return 'none';
    if (p.type === 'wired') return this.wiredInternet === undefined ? 'none' : this.wiredInternet ? 'full' : 'limited';
    const air = this.air.get(p.ssid);
    if (!air) return 'none';
    return air.internet ? 'full' : 'limited';
  }

  async scan(): Promise<VisibleNetwork[]> {
    this.ops.push('scan');
    const activeSsid = this.active ? this.store.get(this.active)?.ssid : undefined;
    return [...this.air.values()].map((a) => ({ ssid: a.ssid, security: a.security, signal: a.signal, connected: a.ssid === activeSsid }));
  }

  async profiles(): Promise<Profile[]> {
    return [...this.store.values()];
  }

  async upsertProfile(profile: Profile): Promise<void> {
    this.ops.push(`upsert ${profile.id}`);
    this.store.set(profile.id, structuredClone(profile));
  }

  async removeProfile(id: string): Promise<void> {
    this.ops.push(`remove ${id}`);
    this.store.delete(id);
    if (this.active === id) this.active = undefined;
  }

  async activate(id: string): Promise<{ ok: true } | { ok: false; error: string }> {
    this.ops.push(`activate ${id}`);
    const p = this.store.get(id);
    if (!p) return { ok: false, error: `no profile ${id}` };
    if (p.kind === 'client') {
      if (p.type === 'wired' && this.wiredInternet === undefined) return { ok: false, error: 'no carrier' };
      if (p.type === 'wifi') {
        const air = this.air.get(p.ssid);
        if (!air) return { ok: false, error: `${p.ssid} is not in range` };
        if (air.psk !== p.psk) return { ok: false, error: 'secrets were required, but not provided' };
      }
    }
    // One radio: activating anything replaces what was active.
    this.active = id;
    return { ok: true };
  }

  async deactivate(id: string): Promise<void> {
    this.ops.push(`deactivate ${id}`);
    if (this.active === id) this.active = undefined;
  }

  async hostname(): Promise<string> {
    return this.host;
  }
}
