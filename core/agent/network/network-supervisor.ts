// The network half of SPEC.md's "Agent behaviour": online → offline → provisioning (the hotspot) after
// offline_before_starting_hotspot_minutes; provisioning ends after retry_connection_timeout_minutes so
// the other networks can be tried again, unless a user was active within user_idle_minutes; a machine
// offline for device_reboot_after_offline_minutes (> 0) reboots, once per offline spell. While offline,
// the configured networks are tried one per check from the highest priority to the lowest (SPEC.md
// "Network selection during provisioning"); only when all have been tried does the hotspot start.
import type { Logger } from '../agent-log.js';
import type { AgentConfig } from '../../config/agent-config.js';
import type { CommandRunner } from '../system/command-runner.js';
import type { ClientProfile, Connectivity, NetworkBackend, Profile } from './backend.js';
import type { Clock } from './clock.js';
import { CONFIG_PROFILE_PREFIX, HOTSPOT_ID, clientProfileOf, hotspotProfileOf, userProfileOf, withPowerSave } from './profiles.js';
import { isDeepStrictEqual } from 'node:util';

export type NetworkState = 'disabled' | 'online' | 'offline' | 'provisioning';

/** SPEC.md: the network is looked at every 15 s. */
export const NETWORK_CHECK_SECONDS = 15;
const MAX_ERRORS = 20;

export interface NetworkSupervisorOptions {
  backend: NetworkBackend;
  clock: Clock;
  runner: CommandRunner;
  logger: Logger;
  /** Milliseconds of n configured minutes (the agent's TimeScale; plain minutes in unit tests). */
  minutes: (n: number) => number;
  checkIntervalMs: number;
  /** Told of every state change (the captive portal runs while provisioning). */
  onStateChange?: (state: NetworkState) => void;
  /**
   * Follow the backend's change signals (NetworkBackend.watch): a change of online state is acted on at
   * once; the timer's check stays for the minute-long timers and as the safety net for a missed signal.
   */
  signals?: boolean;
}

export interface ConnectionAttempt {
  id: string;
  ssid: string;
  at: number;
  error?: string;
}

export class NetworkSupervisor {
  state: NetworkState = 'offline';
  connectivity: Connectivity = 'unknown';
  lastAttempt?: ConnectionAttempt;
  /** Recent errors (the last MAX_ERRORS), for the provisioning status to report and clear. */
  errors: string[] = [];
  rebooted = false;
  private config?: AgentConfig;
  private offlineSince?: number;
  private provisioningSince?: number;
  private lastUserActivity?: number;
  private readonly tried = new Set<string>();
  /** The profiles activated in this round (a subset of `tried`, which also holds those not in reach). */
  private readonly attempted = new Set<string>();
  private timer?: unknown;
  private stepping: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly opts: NetworkSupervisorOptions) {}

  private get log(): Logger {
    return this.opts.logger;
  }

  /** Applies a new config: additional_networks become profiles. Returns the entries it had to skip. */
  async configure(config: AgentConfig): Promise<string[]> {
    this.config = config;
    if (config.advanced_settings.disable_network_configuration) {
      if (this.state === 'provisioning') await this.stopHotspot('disable_network_configuration is set');
      this.setState('disabled');
      return [];
    }
    if (this.state === 'disabled') this.setState('offline');
    const skipped: string[] = [];
    const wanted = new Map<string, ClientProfile>();
    for (const [key, net] of Object.entries(config.additional_networks)) {
      try {
        const p = withPowerSave(clientProfileOf(key, net), config.network_configuration.wifi_power_save);
        wanted.set(p.id, p);
      } catch (err) {
        skipped.push((err as Error).message);
        this.log.error({ err: (err as Error).message }, 'network profile skipped');
      }
    }
    const existing = new Map((await this.opts.backend.profiles()).map((p) => [p.id, p]));
    for (const [id, p] of wanted) {
      if (!isDeepStrictEqual(existing.get(id), p)) {
        await this.opts.backend.upsertProfile(p);
        this.log.info({ id, type: p.type, ssid: p.ssid || undefined, priority: p.priority }, 'network profile saved');
      }
    }
    for (const id of existing.keys()) {
      if (id.startsWith(CONFIG_PROFILE_PREFIX) && !wanted.has(id)) {
        await this.opts.backend.removeProfile(id);
        this.log.info({ id }, 'network profile removed (no longer in additional_networks)');
      }
    }
    return skipped;
  }

  /** Checks every checkIntervalMs until stopped, and at each change the backend signals (`signals`). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
    if (this.opts.signals && this.opts.backend.watch) {
      this.watching = this.opts.backend
        .watch(() => this.onSignal())
        .catch((err: Error) => {
          this.log.warn({ err: err.message }, 'network: cannot follow NetworkManager signals; checking on the timer only');
          return undefined;
        });
    }
  }

  private watching?: Promise<(() => Promise<void>) | undefined>;
  /** A signalled check is queued and not yet begun: further signals (they come in bursts) join it. */
  private signalQueued = false;

  /**
   * A signal: check connectivity now, and run a full check only when the online state changed (the
   * timer's check keeps its pace for trying networks and the minute-long timers).
   */
  private onSignal(): void {
    if (this.signalQueued || this.stopped) return;
    this.signalQueued = true;
    void this.serial(async () => {
      this.signalQueued = false;
      if (!this.config || this.state === 'disabled' || this.stopped) return;
      const online = this.isOnline(await this.opts.backend.connectivity());
      if (online !== (this.state === 'online')) await this.stepOnce();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const unwatch = await this.watching;
    this.watching = undefined;
    await unwatch?.().catch(() => undefined);
    await this.stepping;
    if (this.state === 'provisioning') await this.stopHotspot('the agent stops');
  }

  /** A user is entering details (portal page, form, gRPC call): provisioning is not interrupted. */
  userActivity(): void {
    this.lastUserActivity = this.opts.clock.now();
  }

  /** A Wi-Fi network submitted during provisioning: saved, and tried at once. Throws NetworkInputError. */
  async submitNetwork(ssid: string, psk: string, priority = 0): Promise<void> {
    const profile = withPowerSave(userProfileOf(ssid, psk, priority), this.config?.network_configuration.wifi_power_save);
    this.userActivity();
    await this.serial(async () => {
      await this.opts.backend.upsertProfile(profile);
      this.log.info({ id: profile.id, ssid, priority }, 'network submitted during provisioning');
      if (this.state === 'provisioning') await this.stopHotspot('a network was submitted');
      this.setState('offline');
      this.newRound();
      await this.attempt(profile);
    });
  }

  /** Ends provisioning now (a user asked): the networks are tried again, the hotspot returns if none connects. */
  exitProvisioning(): Promise<void> {
    this.userActivity();
    return this.serial(async () => {
      if (this.state !== 'provisioning') return;
      await this.stopHotspot('a user ended provisioning');
      this.newRound();
    });
  }

  /** The recent errors, cleared by reading them. */
  takeErrors(): string[] {
    return this.errors.splice(0);
  }

  /** One check; the timer calls it, tests call it through the fake clock. */
  step(): Promise<void> {
    return this.serial(() => this.stepOnce());
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.stepping.then(fn).catch((err: Error) => {
      this.log.error({ err: err.message }, 'network check failed');
      this.recordError(err.message);
    });
    this.stepping = run;
    return run;
  }

  private setState(state: NetworkState): void {
    if (state === this.state) return;
    this.state = state;
    this.opts.onStateChange?.(state);
  }

  private recordError(msg: string): void {
    this.errors.push(msg);
    if (this.errors.length > MAX_ERRORS) this.errors.splice(0, this.errors.length - MAX_ERRORS);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimeout(() => {
      void this.step().then(() => this.schedule(this.opts.checkIntervalMs));
    }, ms);
  }

  /**
   * Without turn_on_hotspot_if_wifi_has_no_internet, a network that joins but has no internet (a LAN, a
   * captive portal) keeps the machine where it is.
   */
  private isOnline(c: Connectivity): boolean {
    return c === 'full' || (!this.config!.network_configuration.turn_on_hotspot_if_wifi_has_no_internet && (c === 'limited' || c === 'portal'));
  }

  private since(t: number | undefined, minutes: number): boolean {
    return t !== undefined && this.opts.clock.now() - t >= this.opts.minutes(minutes);
  }

  private async stepOnce(): Promise<void> {
    const config = this.config;
    if (!config || this.state === 'disabled' || this.stopped) return;
    const net = config.network_configuration;
    const now = this.opts.clock.now();
    this.connectivity = await this.opts.backend.connectivity();
    const c = this.connectivity;
    const online = this.isOnline(c);
    if (online) {
      if (this.state === 'provisioning') await this.stopHotspot('online');
      if (this.state !== 'online') this.log.info({ connectivity: c }, 'network: online');
      this.setState('online');
      this.offlineSince = undefined;
      this.newRound();
      this.rebooted = false;
      return;
    }
    if (this.offlineSince === undefined) {
      this.offlineSince = now;
      this.log.warn({ connectivity: c }, 'network: offline');
    }
    const reboot = net.device_reboot_after_offline_minutes;
    if (reboot > 0 && !this.rebooted && this.since(this.offlineSince, reboot)) {
      this.rebooted = true;
      this.log.warn({ minutes: reboot }, 'offline for device_reboot_after_offline_minutes; rebooting');
      const res = await this.opts.runner.run('systemctl', ['reboot']);
      if (res.code !== 0) this.recordError(`systemctl reboot exited with ${res.code}: ${res.stderr.trim()}`);
      return;
    }
    if (this.state === 'provisioning') {
      const idle = this.lastUserActivity === undefined || this.since(this.lastUserActivity, net.user_idle_minutes);
      if (this.since(this.provisioningSince, net.retry_connection_timeout_minutes) && idle) {
        await this.stopHotspot('retry_connection_timeout_minutes elapsed; trying the networks again');
        this.setState('offline');
        this.newRound();
      }
      return;
    }
    this.setState('offline');
    const next = await this.nextCandidate();
    if (next) {
      await this.attempt(next);
      return;
    }
    if (this.since(this.offlineSince, net.offline_before_starting_hotspot_minutes)) await this.startHotspot();
  }

  /**
   * The untried profile of highest priority that can be reached now (a Wi-Fi network must be visible).
   * SPEC.md (turn_on_hotspot_if_wifi_has_no_internet): when false, only the highest-priority network is
   * tried, so a round ends after its first attempt; when true, every configured network is tried in turn.
   */
  private async nextCandidate(): Promise<ClientProfile | undefined> {
    if (!this.config!.network_configuration.turn_on_hotspot_if_wifi_has_no_internet && this.attemptedThisRound()) return undefined;
    const profiles = (await this.opts.backend.profiles()).filter((p): p is ClientProfile => p.kind === 'client' && !this.tried.has(p.id));
    if (profiles.length === 0) return undefined;
    const visible = profiles.some((p) => p.type === 'wifi') ? new Set((await this.opts.backend.scan()).map((n) => n.ssid)) : new Set<string>();
    const reachable = profiles.filter((p) => p.type === 'wired' || visible.has(p.ssid));
    // Unreachable ones count as tried: this round of selection has looked at them.
    for (const p of profiles) if (!reachable.includes(p)) this.tried.add(p.id);
    reachable.sort((a, b) => b.priority - a.priority || a.id.localeCompare(b.id));
    return reachable[0];
  }

  /** A new round of network selection: every network may be tried again. */
  private newRound(): void {
    this.tried.clear();
    this.attempted.clear();
  }

  /** Whether this round of selection has activated a network. */
  private attemptedThisRound(): boolean {
    return this.attempted.size > 0;
  }

  private async attempt(p: ClientProfile): Promise<void> {
    this.tried.add(p.id);
    this.attempted.add(p.id);
    this.log.info({ id: p.id, ssid: p.ssid || undefined, priority: p.priority }, 'network: trying');
    const res = await this.opts.backend.activate(p.id);
    this.lastAttempt = { id: p.id, ssid: p.ssid, at: this.opts.clock.now(), error: res.ok ? undefined : res.error };
    if (!res.ok) {
      this.recordError(`${p.ssid || p.id}: ${res.error}`);
      this.log.warn({ id: p.id, err: res.error }, 'network: could not connect');
    }
  }

  private async startHotspot(): Promise<void> {
    const profile: Profile = hotspotProfileOf(this.config!.network_configuration, await this.opts.backend.hostname());
    await this.opts.backend.upsertProfile(profile);
    const res = await this.opts.backend.activate(HOTSPOT_ID);
    if (!res.ok) {
      const msg = `hotspot ${profile.ssid}: ${res.error}`;
      if (this.errors.at(-1) !== msg) this.log.error({ err: res.error, ssid: profile.ssid }, 'provisioning: the hotspot did not start');
      this.recordError(msg);
      return;
    }
    this.setState('provisioning');
    this.provisioningSince = this.opts.clock.now();
    this.lastUserActivity = undefined;
    this.log.info({ ssid: profile.ssid }, 'provisioning: hotspot started');
  }

  private async stopHotspot(reason: string): Promise<void> {
    await this.opts.backend.deactivate(HOTSPOT_ID);
    this.provisioningSince = undefined;
    this.setState('offline');
    this.log.info({ reason }, 'provisioning: hotspot stopped');
  }
}
