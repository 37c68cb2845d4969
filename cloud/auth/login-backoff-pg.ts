// Login back-off across the processes of the scale-out mode: the same rules and settings as the
// in-process gate (login-backoff.ts), with the counts in PostgreSQL's login_failures table (one row per
// key id and per source address: its window's start, its failures, and until when it is refused), so
// that N processes allow no more attempts than one. A failure is one upsert that counts and decides in
// the same statement (the row's lock orders concurrent ones); a check is one indexed read.
//
// Growth is bounded: a row whose window has passed and that is not backing off says nothing a missing
// row would not, so such rows are deleted (at most every PRUNE_EVERY_MS per process), and beyond
// maxEntries rows per kind the least recently failed go first, as in the in-process gate. A flood of random
// key ids from one address stops at that address's limit, before any row is written for it.
import type { TabularStore } from '../store/tabular.js';
import { backoffRefusal, LoginBackoff, loginLimitsFromEnv, sourceAddress, type LoginGate, type LoginLimits } from './login-backoff.js';

export interface PgLoginBackoffOptions extends Partial<LoginLimits> {
  /** Rows kept per kind (key, address); the least recently failed go first. Default 100,000. */
  maxEntries?: number;
  now?: () => number;
}

/** How often one process deletes expired rows and trims the table. */
export const PRUNE_EVERY_MS = 10_000;

type Kind = 'key' | 'address';

export class PgLoginBackoff implements LoginGate {
  readonly maxKeyFailures: number;
  readonly maxAddressFailures: number;
  readonly windowMs: number;
  readonly backoffMs: number;
  readonly maxEntries: number;
  private readonly now: () => number;
  private lastPrune = 0;
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly store: TabularStore,
    options: PgLoginBackoffOptions = {},
  ) {
    if (store.dialect !== 'postgres') throw new Error('PgLoginBackoff keeps its counts in PostgreSQL; the embedded store uses LoginBackoff');
    this.maxKeyFailures = options.maxKeyFailures ?? 10;
    this.maxAddressFailures = options.maxAddressFailures ?? 100;
    this.windowMs = options.windowMs ?? 60_000;
    this.backoffMs = options.backoffMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  async check(keyId: string, rawAddress: string): Promise<void> {
    const address = sourceAddress(rawAddress);
    const now = this.now();
    const rows = await this.store.query(
      `SELECT kind, blocked_until FROM login_failures
       WHERE ((kind = 'key' AND id = ?) OR (kind = 'address' AND id = ?)) AND blocked_until > ?`,
      [keyId, address, new Date(now)],
    );
    if (rows.length === 0) return;
    const until = (kind: Kind) => {
      const row = rows.find((r) => r.kind === kind);
      return row ? (row.blocked_until as Date).getTime() : 0;
    };
    const keyUntil = until('key');
    const who = keyUntil ? `key id ${keyId}` : `address ${address}`;
    const limit = keyUntil ? this.maxKeyFailures : this.maxAddressFailures;
    throw backoffRefusal(who, limit, this.windowMs, Math.max(keyUntil, until('address')), now);
  }

  async failed(keyId: string, rawAddress: string): Promise<void> {
    const now = this.now();
    await this.count('key', keyId, this.maxKeyFailures, now);
    await this.count('address', sourceAddress(rawAddress), this.maxAddressFailures, now);
    if (now - this.lastPrune >= PRUNE_EVERY_MS && !this.pruning) {
      this.lastPrune = now;
      this.pruning = this.prune(now).finally(() => (this.pruning = undefined));
      await this.pruning;
    }
  }

  /** Only the key's own count is cleared: a success with one's own key must not reset an address under attack. */
  async succeeded(keyId: string): Promise<void> {
    await this.store.execute(`DELETE FROM login_failures WHERE kind = 'key' AND id = ?`, [keyId]);
  }

  /** One failure of id: a new window when the last one has passed, refused for backoffMs once at the limit. */
  private async count(kind: Kind, id: string, limit: number, now: number): Promise<void> {
    const at = new Date(now);
    const windowFloor = new Date(now - this.windowMs);
    const until = new Date(now + this.backoffMs);
    await this.store.execute(
      `INSERT INTO login_failures AS f VALUES ($1, $2, $3::timestamptz, 1, CASE WHEN 1 >= $6::integer THEN $5::timestamptz END, $3::timestamptz)
       ON CONFLICT (kind, id) DO UPDATE SET
         window_start = CASE WHEN f.window_start <= $4::timestamptz THEN $3::timestamptz ELSE f.window_start END,
         failures = CASE WHEN f.window_start <= $4::timestamptz THEN 1 ELSE f.failures + 1 END,
         blocked_until = CASE WHEN (CASE WHEN f.window_start <= $4::timestamptz THEN 1 ELSE f.failures + 1 END) >= $6::integer
           THEN $5::timestamptz ELSE f.blocked_until END,
         last_failed = $3::timestamptz`,
      [kind, id, at, windowFloor, until, limit],
    );
  }

  /** Deletes the rows that say nothing any more, then the least recently failed beyond maxEntries per kind. */
  async prune(now = this.now()): Promise<void> {
    await this.store.execute('DELETE FROM login_failures WHERE last_failed <= ? AND (blocked_until IS NULL OR blocked_until <= ?)', [
      new Date(now - this.windowMs),
      new Date(now),
    ]);
    for (const kind of ['key', 'address'] as const) {
      // Ties (failures in the same millisecond) are broken by id, so that exactly maxEntries stay.
      await this.store.execute(
        `DELETE FROM login_failures WHERE kind = ? AND id IN (
           SELECT id FROM login_failures WHERE kind = ? ORDER BY last_failed DESC, id OFFSET ?)`,
        [kind, kind, this.maxEntries],
      );
    }
  }
}

/**
 * The cloud's login gate for its store, configured from PLATFORM_LOGIN_* (login-backoff.ts): counts in
 * PostgreSQL, shared by every process, in the scale-out mode; in this process for the embedded store.
 */
export function loginGateForStore(store: TabularStore, env: NodeJS.ProcessEnv = process.env): LoginGate {
  const limits = loginLimitsFromEnv(env);
  return store.dialect === 'postgres' ? new PgLoginBackoff(store, limits) : new LoginBackoff(limits);
}
