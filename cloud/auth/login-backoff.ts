// Login back-off for AuthService/Authenticate and the PostgreSQL endpoint's password login: after too
// many failures in a window, a key id or a source address is refused with RESOURCE_EXHAUSTED for a while,
// before any scrypt runs, so a flood of wrong keys costs the server a map lookup, not a hash. A cloud
// has one gate (created in cloud/server/cloud-server.ts, handed to extensions as CloudContext.loginGate),
// so failures over psql count toward Authenticate's back-off and the other way round. In the
// scale-out mode the counts live in PostgreSQL (login-backoff-pg.ts), shared by every process of the
// cloud, so that spreading attempts over the processes gains an attacker nothing.
//
// Settings (environment of `platform-cloud serve`):
//   PLATFORM_LOGIN_MAX_FAILURES          failures per key id per window before it backs off (default 10)
//   PLATFORM_LOGIN_MAX_ADDRESS_FAILURES  failures per source address per window (default 100; higher than per
//                                        key because a fleet behind one NAT shares an address, and one
//                                        tenant's typo must not lock out the others)
//   PLATFORM_LOGIN_WINDOW_S              the window failures are counted in (default 60)
//   PLATFORM_LOGIN_BACKOFF_S             how long a key id or address is refused once over (default 60)
import { resourceExhausted } from '../../core/serving/status-error.js';

/** Callers await each call: the in-process gate answers at once, the PostgreSQL one after a statement. */
export interface LoginGate {
  /** Throws (or rejects with) StatusError RESOURCE_EXHAUSTED, naming when to retry, while this key id or address is backing off. */
  check(keyId: string, address: string): void | Promise<void>;
  failed(keyId: string, address: string): void | Promise<void>;
  succeeded(keyId: string, address: string): void | Promise<void>;
}

/** The limits of a gate, from PLATFORM_LOGIN_* (see the header). */
export interface LoginLimits {
  maxKeyFailures: number;
  maxAddressFailures: number;
  windowMs: number;
  backoffMs: number;
}

/** Reads and checks PLATFORM_LOGIN_* (see the header). */
export function loginLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): LoginLimits {
  const read = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 1) throw new Error(`${name} must be a number >= 1, got '${raw}'`);
    return value;
  };
  return {
    maxKeyFailures: read('PLATFORM_LOGIN_MAX_FAILURES', 10),
    maxAddressFailures: read('PLATFORM_LOGIN_MAX_ADDRESS_FAILURES', 100),
    windowMs: read('PLATFORM_LOGIN_WINDOW_S', 60) * 1000,
    backoffMs: read('PLATFORM_LOGIN_BACKOFF_S', 60) * 1000,
  };
}

/** The refusal of a key id or address backing off until `until` (ms). */
export function backoffRefusal(who: string, limit: number, windowMs: number, until: number, now: number): Error {
  return resourceExhausted(
    `login back-off: ${who} had ${limit} or more failed logins within ${windowMs / 1000} s; ` +
      `retry after ${new Date(until).toISOString()} (in ${Math.ceil((until - now) / 1000)} s)`,
  );
}

export interface LoginBackoffOptions {
  maxKeyFailures?: number;
  maxAddressFailures?: number;
  windowMs?: number;
  backoffMs?: number;
  /** Entries kept per kind; the oldest go first, so a flood of random key ids cannot grow memory. */
  maxEntries?: number;
  now?: () => number;
}

interface Counter {
  /** Start of the current counting window. */
  windowStart: number;
  failures: number;
  /** Refused until this time (0: not backing off). */
  until: number;
}

class FailureCounts {
  private readonly counters = new Map<string, Counter>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly backoffMs: number,
    private readonly maxEntries: number,
  ) {}

  blockedUntil(id: string, now: number): number {
    const c = this.counters.get(id);
    return c && c.until > now ? c.until : 0;
  }

  fail(id: string, now: number): void {
    let c = this.counters.get(id);
    if (!c || now - c.windowStart >= this.windowMs) {
      c = { windowStart: now, failures: 0, until: c && c.until > now ? c.until : 0 };
    }
    // Re-inserting keeps the Map in least-recently-failed order for eviction.
    this.counters.delete(id);
    this.counters.set(id, c);
    c.failures++;
    if (c.failures >= this.limit) c.until = now + this.backoffMs;
    while (this.counters.size > this.maxEntries) this.counters.delete(this.counters.keys().next().value as string);
  }

  clear(id: string): void {
    this.counters.delete(id);
  }
}

export class LoginBackoff implements LoginGate {
  readonly maxKeyFailures: number;
  readonly maxAddressFailures: number;
  readonly windowMs: number;
  readonly backoffMs: number;
  private readonly keys: FailureCounts;
  private readonly addresses: FailureCounts;
  private readonly now: () => number;

  constructor(options: LoginBackoffOptions = {}) {
    this.maxKeyFailures = options.maxKeyFailures ?? 10;
    this.maxAddressFailures = options.maxAddressFailures ?? 100;
    this.windowMs = options.windowMs ?? 60_000;
    this.backoffMs = options.backoffMs ?? 60_000;
    this.now = options.now ?? Date.now;
    const maxEntries = options.maxEntries ?? 100_000;
    this.keys = new FailureCounts(this.maxKeyFailures, this.windowMs, this.backoffMs, maxEntries);
    this.addresses = new FailureCounts(this.maxAddressFailures, this.windowMs, this.backoffMs, maxEntries);
  }

  /** The gate configured from PLATFORM_LOGIN_* (see the header). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): LoginBackoff {
    return new LoginBackoff(loginLimitsFromEnv(env));
  }

  check(keyId: string, rawAddress: string): void {
    const address = sourceAddress(rawAddress);
    const now = this.now();
    const keyUntil = this.keys.blockedUntil(keyId, now);
    const addressUntil = this.addresses.blockedUntil(address, now);
    if (!keyUntil && !addressUntil) return;
    const until = Math.max(keyUntil, addressUntil);
    const who = keyUntil ? `key id ${keyId}` : `address ${address}`;
    const limit = keyUntil ? this.maxKeyFailures : this.maxAddressFailures;
    throw backoffRefusal(who, limit, this.windowMs, until, now);
  }

  failed(keyId: string, address: string): void {
    const now = this.now();
    this.keys.fail(keyId, now);
    this.addresses.fail(sourceAddress(address), now);
  }

  /** Only the key's own count is cleared: a success with one's own key must not reset an address under attack. */
  succeeded(keyId: string, _address: string): void {
    this.keys.clear(keyId);
  }
}

/**
 * One spelling per source: an IPv4 client seen through a dual-stack socket ("::ffff:1.2.3.4", as the
 * PostgreSQL endpoint's socket may report it) counts as "1.2.3.4", as gRPC reports it, so the gate's
 * users share one count per address.
 */
export function sourceAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/** The source address of a gRPC peer string ("ipv4:1.2.3.4:5678", "[::1]:5678", "unix:..."), without the port. */
export function peerAddress(peer: string): string {
  const bare = peer.replace(/^(ipv4|ipv6):/, '');
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(bare);
  if (v6) return v6[1];
  const v4 = /^([^:]+):\d+$/.exec(bare);
  return v4 ? v4[1] : bare;
}
