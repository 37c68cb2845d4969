// Notify and listen by channel name, across every process of one cloud. On PostgreSQL (the scale-out
// mode) a payload published by one process reaches the subscribers of every process on the same
// database, through NOTIFY and a dedicated LISTEN connection per store; on the embedded DuckDB store (one
// process) it reaches the subscribers of this process. Users: part events (cloud/parts/part-events.ts),
// key revocation (cloud/auth/authorizer.ts), log tails (cloud/parts/pg-part-logs.ts); anything else
// that must tell the other processes "look again" (a new page) can use it the same way.
//
// What it promises: a payload published here is delivered to this process's subscribers at once (before
// publish resolves) and, once the publishing statement commits, to the other processes'. Notifications
// are not stored: while a listening connection is down (the database restarted, the network dropped)
// those sent meanwhile are lost, so after it is back, onResync handlers are called with the time it was
// lost, and each user catches up from its tables (the rows are the truth; a notification only says
// "look"). The first connection counts as a resync too, from the first subscription, so that nothing
// published between a subscriber's first read and the listening connection is missed.
//
// PostgreSQL limits a payload to 7999 bytes: publish refuses a longer one (send an id, not the data).
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { PgStore } from './pg-store.js';
import type { SqlSession, TabularStore } from './tabular.js';

export type Unsubscribe = () => void;

export interface StoreChannels {
  /** Delivers payload to this process's subscribers of channel now, and to every other process's once sent. */
  publish(channel: string, payload: string): Promise<void>;
  /** Calls fn with every payload published on channel, by this process or another. */
  subscribe(channel: string, fn: (payload: string) => void): Unsubscribe;
  /** Calls fn when notifications from other processes may have been missed since `since` (see the header). */
  onResync(fn: (since: Date) => void): Unsubscribe;
  /** Resolves when notifications of the subscribed channels from other processes are being received. */
  ready(): Promise<void>;
}

/** PostgreSQL's limit on a NOTIFY payload, in bytes (its 8000 less the terminating zero). */
export const MAX_PAYLOAD_BYTES = 7999;
/** How often the listening connection is checked, so that a connection that went silent is replaced. */
export const LISTEN_PING_MS = 2_000;
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`channel "${channel}": lower-case letters, digits and _, starting with a letter or _, at most 63`);
}

function checkPayload(payload: string): void {
  const bytes = Buffer.byteLength(payload) + 9; // the origin prefix
  if (bytes > MAX_PAYLOAD_BYTES)
    throw new Error(`notification payload: at most ${MAX_PAYLOAD_BYTES - 9} bytes, got ${bytes - 9}; send an id and read the rest from the tables`);
}

/** In one process: an EventEmitter per channel name. */
class LocalChannels implements StoreChannels {
  protected readonly local = new EventEmitter();

  constructor() {
    // Every stream's subscriber is a listener: many are expected, not a leak.
    this.local.setMaxListeners(0);
  }

  async publish(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    checkPayload(payload);
    this.local.emit(`c:${channel}`, payload);
  }

  subscribe(channel: string, fn: (payload: string) => void): Unsubscribe {
    checkChannel(channel);
    this.local.on(`c:${channel}`, fn);
    return () => void this.local.off(`c:${channel}`, fn);
  }

  onResync(fn: (since: Date) => void): Unsubscribe {
    this.local.on('resync', fn);
    return () => void this.local.off('resync', fn);
  }

  async ready(): Promise<void> {}
}

/** Across the processes of one PostgreSQL database. */
class PgChannels extends LocalChannels {
  /** Sent before every payload, so that the listener skips what this process delivered itself. */
  private readonly origin = randomBytes(6).toString('base64url');
  private readonly channels = new Set<string>();
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;
  private readonly stop = new AbortController();
  private lostAt: Date | undefined;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly store: PgStore) {
    super();
    store.onClose(() => this.close());
  }

  override async publish(channel: string, payload: string): Promise<void> {
    await super.publish(channel, payload);
    await notify(this.store, channel, `${this.origin}:${payload}`);
  }

  override subscribe(channel: string, fn: (payload: string) => void): Unsubscribe {
    const unsubscribe = super.subscribe(channel, fn);
    if (!this.channels.has(channel)) {
      this.channels.add(channel);
      const client = this.client;
      if (client) {
        // A channel added while connected: what was sent on it before LISTEN took effect is caught up.
        const since = new Date();
        client.query(`LISTEN "${channel}"`).then(
          () => this.local.emit('resync', since),
          () => this.drop(client),
        );
      }
    }
    this.running ??= this.run();
    return unsubscribe;
  }

  override async ready(): Promise<void> {
    this.running ??= this.run();
    if (this.client) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    void client.end().catch(() => undefined);
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.stop.signal }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    // Everything before the first connection counts as missed (see the header).
    this.lostAt = new Date();
    let backoffMs = 100;
    while (!this.stop.signal.aborted) {
      let client: pg.Client | undefined;
      // The last moment this connection was known to work: notifications may be lost from then on.
      let lastGood: Date | undefined;
      try {
        client = await this.store.connectDedicated({ applicationName: 'platform-cloud listen', queryTimeoutMs: 10_000 });
        let ended = false;
        client.once('end', () => (ended = true));
        client.on('notification', (n) => this.deliver(n.channel, n.payload ?? ''));
        const listened = new Set(this.channels);
        for (const channel of listened) await client.query(`LISTEN "${channel}"`);
        if (this.stop.signal.aborted) {
          // Closed while connecting: this connection must not outlive the store.
          this.drop(client);
          break;
        }
        this.client = client;
        // Channels subscribed while this connection was being set up (later ones LISTEN themselves).
        for (const channel of this.channels) if (!listened.has(channel)) await client.query(`LISTEN "${channel}"`);
        lastGood = new Date();
        backoffMs = 100;
        const since = this.lostAt;
        this.lostAt = undefined;
        if (since) this.local.emit('resync', since);
        for (const resolve of this.waiters.splice(0)) resolve();
        // A ping now and then, so that a connection gone silent is found and replaced.
        while (!this.stop.signal.aborted && this.client === client && !ended) {
          await this.pause(LISTEN_PING_MS);
          if (this.stop.signal.aborted || this.client !== client || ended) break;
          await client.query('SELECT 1');
          lastGood = new Date();
        }
      } catch {
        // Connecting, listening or the ping failed: a new connection after the back-off.
      }
      if (client) this.drop(client);
      if (this.stop.signal.aborted) break;
      this.lostAt ??= lastGood ?? new Date();
      await this.pause(backoffMs);
      backoffMs = Math.min(backoffMs * 2, 2_000);
    }
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private deliver(channel: string, raw: string): void {
    const colon = raw.indexOf(':');
    if (colon < 0 || raw.slice(0, colon) === this.origin) return;
    this.local.emit(`c:${channel}`, raw.slice(colon + 1));
  }

  private async close(): Promise<void> {
    this.stop.abort();
    if (this.client) this.drop(this.client);
    await this.running;
  }
}

/**
 * Sends payload on channel to the other processes (PostgreSQL's pg_notify). On a transaction's session,
 * it is sent when the transaction commits and not at all if it rolls back.
 */
export async function notify(session: SqlSession, channel: string, payload: string): Promise<void> {
  await session.query('SELECT pg_notify(?, ?)', [channel, payload]);
}

const byStore = new WeakMap<TabularStore, StoreChannels>();

/** The channels of a store: one set per store, shared by its users in this process. */
export function storeChannels(store: TabularStore): StoreChannels {
  let channels = byStore.get(store);
  if (!channels) {
    channels = store instanceof PgStore ? new PgChannels(store) : new LocalChannels();
    byStore.set(store, channels);
  }
  return channels;
}
