// Who may hold the PostgreSQL endpoint's connections. The endpoint has one global cap, and before this
// module one tenant could take all of it: 500 sockets that never finish the start-up message, or one
// organisation's idle sessions, refused every other organisation's psql (issue 27, finding 6). So a
// connection is counted twice over its life:
// - until it has logged in, against its source address (a client that has not proven who it is can only
//   be told apart by where it comes from), bounded by `maxStartupsPerAddress`; the handshake timer in
//   pg-endpoint.ts closes it if it never logs in. An IPv6 address counts as its /64, the block one host
//   or one customer line is usually given whole, so that one machine cannot spread itself over 2^64
//   addresses;
// - once logged in, against its organisation, bounded by `maxSessionsPerOrganization`, which is set
//   below the global cap so that one organisation's sessions leave room for the others.
// When the global cap is reached anyway (half-open sockets spread over many addresses), a new connection
// takes the place of the oldest one that has still not logged in after EVICT_STARTUP_AFTER_MS: a client
// that speaks the protocol logs in within tens of milliseconds, so the oldest waiting ones are the stalled
// ones. Logged-in sessions are never evicted.
// Every refusal is SQLSTATE 53300 (too_many_connections), as PostgreSQL refuses past max_connections or
// a role's connection limit, and names the limit and the variable that sets it.
import { isIPv6 } from 'node:net';
import { sourceAddress } from '../../auth/login-backoff.js';

export interface ConnectionSlotLimits {
  /** Open connections in total, logged in or not. */
  maxConnections: number;
  /** Connections from one source address that have not logged in yet. */
  maxStartupsPerAddress: number;
  /** Logged-in sessions of one organisation. */
  maxSessionsPerOrganization: number;
}

/** A refusal: the connection gets a FATAL ErrorResponse with this SQLSTATE and message, then is closed. */
export interface SlotRefusal {
  code: '53300';
  message: string;
}

/** One accepted connection's place in the counts; `release` when the connection closes (more calls are harmless). */
export interface ConnectionSlot {
  readonly address: string;
  /** Moves the connection from its address's start-up count to its organisation's session count, or refuses. */
  loggedIn(organizationId: string, username: string): SlotRefusal | undefined;
  release(): void;
}

/** A connection that has not logged in for this long may be closed to make room when the endpoint is full. */
export const EVICT_STARTUP_AFTER_MS = 1000;

interface Waiting {
  since: number;
  evict: () => void;
  release: () => void;
}

export class ConnectionSlots {
  private open = 0;
  private readonly startups = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  /** Connections that have not logged in yet, oldest first (a Set keeps insertion order). */
  private readonly waiting = new Set<Waiting>();

  constructor(
    private readonly limits: ConnectionSlotLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Connections open now (for tests and monitoring). */
  get size(): number {
    return this.open;
  }

  /** Connections from `address` that have not logged in yet. */
  startupsFrom(address: string): number {
    return this.startups.get(addressGroup(address)) ?? 0;
  }

  /** Logged-in sessions of `organizationId`. */
  sessionsOf(organizationId: string): number {
    return this.sessions.get(organizationId) ?? 0;
  }

  /**
   * Takes a slot for a new connection from `remoteAddress`, or says why it is refused. `evict` closes the
   * connection if it is later chosen to make room (its slot is released already when it is called).
   */
  accept(remoteAddress: string, evict: () => void = () => undefined): ConnectionSlot | SlotRefusal {
    const { maxConnections, maxStartupsPerAddress, maxSessionsPerOrganization } = this.limits;
    const address = addressGroup(remoteAddress);
    if ((this.startups.get(address) ?? 0) >= maxStartupsPerAddress) {
      return refusal(
        `too many connections from ${address} that have not logged in yet (the ${maxStartupsPerAddress}-connection limit per address, PLATFORM_QUERY_PG_MAX_STARTUPS_PER_ADDRESS)`,
      );
    }
    if (this.open >= maxConnections) {
      const oldest = this.waiting.values().next().value;
      if (!oldest || this.now() - oldest.since < EVICT_STARTUP_AFTER_MS) {
        return refusal(`sorry, too many clients already (the ${maxConnections}-connection limit, PLATFORM_QUERY_PG_MAX_CONNECTIONS)`);
      }
      oldest.release();
      oldest.evict();
    }
    this.open++;
    this.startups.set(address, (this.startups.get(address) ?? 0) + 1);
    let state: 'starting' | 'session' | 'released' = 'starting';
    let organization = '';
    const waiting: Waiting = { since: this.now(), evict, release: () => release() };
    this.waiting.add(waiting);
    const leaveStartup = () => {
      decrement(this.startups, address);
      this.waiting.delete(waiting);
    };
    const release = () => {
      if (state === 'released') return;
      if (state === 'starting') leaveStartup();
      else decrement(this.sessions, organization);
      state = 'released';
      this.open--;
    };
    return {
      address,
      loggedIn: (organizationId, username) => {
        if (state !== 'starting') return undefined;
        const current = this.sessions.get(organizationId) ?? 0;
        if (current >= maxSessionsPerOrganization) {
          return refusal(
            `too many connections for role "${username}" (the ${maxSessionsPerOrganization}-session limit per organization, PLATFORM_QUERY_PG_MAX_SESSIONS_PER_ORG)`,
          );
        }
        leaveStartup();
        this.sessions.set(organizationId, current + 1);
        organization = organizationId;
        state = 'session';
        return undefined;
      },
      release,
    };
  }
}

export const isRefusal = (r: ConnectionSlot | SlotRefusal): r is SlotRefusal => 'code' in r;

const refusal = (message: string): SlotRefusal => ({ code: '53300', message });

function decrement(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 0) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

/**
 * What a connection's start-up counts against: an IPv4 address as it is (also when seen through a
 * dual-stack socket), an IPv6 address as its /64 (`2001:db8:1:2::/64`), as an IPv4 office behind NAT is one
 * address; a link-local IPv6 address as it is.
 */
export function addressGroup(remoteAddress: string): string {
  const address = sourceAddress(remoteAddress);
  const bare = address.replace(/%.*$/, ''); // a link-local address' zone
  // Link-local addresses (fe80::/10) share one /64 on every link: each stays its own.
  if (!isIPv6(bare) || /^fe[89ab]/i.test(bare)) return address;
  const [head, tail = ''] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = bare.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = bare.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
