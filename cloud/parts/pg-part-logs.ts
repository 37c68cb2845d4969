// Part logs on PostgreSQL (issue 33's scale-out mode): the table logs.part_logs (pg-schema.ts,
// migration 0006: the same name, columns and types as the DuckDB table in logs.duckdb), written with
// one INSERT per batch, and tails that follow what any process of the cloud writes.
//
// Writing: a batch is one INSERT ... SELECT over unnest() of one array parameter per column (a 10,000-
// entry batch as 70,000 separate parameters would pass PostgreSQL's limit of 65,535). Each row's seq is
// nextval() of logs.part_logs_seq, in the batch's order. The batch first takes a transaction-scoped
// advisory lock on its part, so that the batches of one part commit in the order their seqs were
// taken, whichever process writes them: a part's committed seqs only grow, which is what lets a tail
// follow a part by seq without ever stepping over a batch that commits late.
//
// Following (TailRobotPartLogs): after a batch commits, its writer publishes the part's id on
// PART_LOGS_CHANNEL (cloud/store/pg-notify.ts: one LISTEN connection per process, shared with part
// configs and key revocation). A process reads, for the parts it has tails of and that were named, the
// entries with a seq above the last one it handed out, so a tail served by one process sees at once the
// entries uploaded through any other. A notification only says "look": a lost one (the writer died
// between its commit and the NOTIFY, the listening connection was down) is made up by the catch-up
// read of every followed part when the connection is back, and by a slow poll of every followed part
// (every FOLLOW_FALLBACK_POLL_MS), the only wake-up left if the notifications themselves fail.
// Reads are one at a time per process, so a part's entries are handed out in seq order and once.
import type { PgStore } from '../store/pg-store.js';
import { storeChannels } from '../store/pg-notify.js';
import type { SqlSession, TabularStore } from '../store/tabular.js';
import type { StoredLogEntry } from './log-entry.js';

/** The channel on which a part's id is published after a batch of its entries committed. */
export const PART_LOGS_CHANNEL = 'platform_part_logs';
/** How often every followed part is read even without a notification: the most a lost one delays a tail. */
export const FOLLOW_FALLBACK_POLL_MS = 2_000;
/** Entries read per part and read; a part with more is read again at once. */
const FOLLOW_BATCH = 5000;

const insertBatch = `INSERT INTO logs.part_logs (part_id, time, seq, level, logger_name, message, fields)
  SELECT ?, e.time, nextval('logs.part_logs_seq'), e.level, e.logger_name, e.message, e.fields
  FROM unnest(CAST(? AS TIMESTAMPTZ[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]))
    WITH ORDINALITY AS e(time, level, logger_name, message, fields, n)
  ORDER BY e.n`;

const isPg = (store: TabularStore): store is PgStore => store.dialect === 'postgres' && 'transactAt' in store;

/** Stores entries of one part in one statement; resolves once they are committed and the tails told. */
export async function insertLogBatchPg(store: TabularStore, partId: string, entries: readonly StoredLogEntry[]): Promise<void> {
  if (!isPg(store)) throw new Error('insertLogBatchPg needs a PgStore');
  const times = entries.map((e) => e.time.toISOString());
  const params = [
    partId,
    times,
    entries.map((e) => e.level),
    entries.map((e) => e.loggerName),
    entries.map((e) => e.message),
    entries.map((e) => JSON.stringify(e.fields)),
  ];
  // READ COMMITTED: the transaction only inserts; the lock, not the isolation level, orders a part's batches.
  await store.transactAt('READ COMMITTED', async (tx: SqlSession) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext(?))', [`part_logs:${partId}`]);
    await tx.execute(insertBatch, params);
  });
  // After the commit, not in the transaction: a NOTIFY that fails (PostgreSQL's notification queue
  // full) must not undo stored entries, and a lost one is made up by the tails' slow poll.
  await storeChannels(store)
    .publish(PART_LOGS_CHANNEL, partId)
    .catch(() => undefined);
}

type Listener = (entries: StoredLogEntry[]) => void;

interface Followed {
  /** The highest seq handed to the listeners. */
  after: bigint;
  listeners: Set<Listener>;
}

export interface FollowOptions {
  /** See FOLLOW_FALLBACK_POLL_MS. */
  fallbackPollMs?: number;
  /** False: no LISTEN, the slow poll alone (what a process whose notifications are lost gets). */
  notifications?: boolean;
}

/** The tails of one store's parts in this process (see the header). */
export class PgLogFollower {
  private readonly parts = new Map<string, Followed>();
  /** Parts named by a notification (or with more entries waiting) and not read since. */
  private readonly named = new Set<string>();
  private readAll = false;
  private reading = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly fallbackPollMs: number;

  constructor(
    private readonly store: TabularStore,
    options: FollowOptions,
  ) {
    this.fallbackPollMs = options.fallbackPollMs ?? FOLLOW_FALLBACK_POLL_MS;
    if (options.notifications === false) return;
    // Subscribed for the follower's life (the store's): the LISTEN connection is the process's anyway.
    const channels = storeChannels(store);
    channels.subscribe(PART_LOGS_CHANNEL, (partId) => {
      if (!this.parts.has(partId)) return;
      this.named.add(partId);
      this.wake();
    });
    // Notifications may have been lost meanwhile: every followed part is read.
    channels.onResync(() => this.wakeAll());
  }

  /**
   * Calls fn with each batch of partId's entries committed from now on, by any process; resolves once
   * that start is fixed, with the function that ends the following.
   */
  async follow(partId: string, fn: Listener): Promise<() => void> {
    let followed = this.parts.get(partId);
    if (!followed) {
      const rows = await this.store.query('SELECT coalesce(max(seq), 0) AS m FROM logs.part_logs WHERE part_id = ?', [partId]);
      // Another follow of the same part may have started while this one read.
      followed = this.parts.get(partId);
      if (!followed) this.parts.set(partId, (followed = { after: rows[0].m as bigint, listeners: new Set() }));
    }
    followed.listeners.add(fn);
    this.timer ??= setInterval(() => this.wakeAll(), this.fallbackPollMs).unref();
    const part = followed;
    return () => {
      part.listeners.delete(fn);
      if (part.listeners.size > 0 || this.parts.get(partId) !== part) return;
      this.parts.delete(partId);
      this.named.delete(partId);
      if (this.parts.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private wakeAll(): void {
    this.readAll = true;
    this.wake();
  }

  /** Starts reading unless a read runs: that one reads again for what was named meanwhile. */
  private wake(): void {
    if (this.reading || this.parts.size === 0) return;
    this.reading = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.parts.size > 0 && (this.readAll || this.named.size > 0)) {
        const ids = this.readAll ? [...this.parts.keys()] : [...this.named].filter((id) => this.parts.has(id));
        this.readAll = false;
        this.named.clear();
        if (ids.length > 0) for (const id of await this.readOnce(ids)) this.named.add(id);
      }
    } catch {
      // The database is away: the slow poll or the resync after reconnecting reads again, from the same seqs.
    } finally {
      // Set in the same turn as the loop's last test: a wake from now on starts a new drain.
      this.reading = false;
    }
  }

  /** One read of the named parts; returns those that had more than one read's worth waiting. */
  private async readOnce(ids: string[]): Promise<string[]> {
    const afters = ids.map((id) => String(this.parts.get(id)!.after));
    const rows = await this.store.query(
      `SELECT w.part_id, l.time, l.seq, l.level, l.logger_name, l.message, l.fields
       FROM unnest(CAST(? AS VARCHAR[]), CAST(? AS BIGINT[])) AS w(part_id, after)
       CROSS JOIN LATERAL (
         SELECT time, seq, level, logger_name, message, fields FROM logs.part_logs p
         WHERE p.part_id = w.part_id AND p.seq > w.after ORDER BY p.seq LIMIT ${FOLLOW_BATCH}) l
       ORDER BY w.part_id, l.seq`,
      [ids, afters],
    );
    const byPart = new Map<string, { entry: StoredLogEntry; seq: bigint }[]>();
    for (const r of rows) {
      const id = String(r.part_id);
      let got = byPart.get(id);
      if (!got) byPart.set(id, (got = []));
      const entry: StoredLogEntry = {
        time: r.time as Date,
        level: String(r.level),
        loggerName: String(r.logger_name),
        message: String(r.message),
        fields: JSON.parse(String(r.fields)) as Record<string, unknown>,
      };
      got.push({ entry, seq: r.seq as bigint });
    }
    const more: string[] = [];
    for (const [id, got] of byPart) {
      const followed = this.parts.get(id);
      if (!followed) continue; // no longer followed
      if (got.length >= FOLLOW_BATCH) more.push(id);
      // A part followed afresh while this read ran starts later: only what is past its start.
      const after = followed.after;
      const fresh = got.filter((g) => g.seq > after);
      if (fresh.length === 0) continue;
      followed.after = fresh[fresh.length - 1].seq;
      const entries = fresh.map((g) => g.entry);
      for (const fn of [...followed.listeners]) fn(entries);
    }
    return more;
  }
}

const followers = new WeakMap<TabularStore, PgLogFollower>();

/**
 * The follower of store's part logs in this process; options count only when it is made (the first
 * call for the store: followPartLogsPg makes it with the defaults).
 */
export function pgLogFollower(store: TabularStore, options: FollowOptions = {}): PgLogFollower {
  let follower = followers.get(store);
  if (!follower) followers.set(store, (follower = new PgLogFollower(store, options)));
  return follower;
}

/** See PgLogFollower.follow. */
export function followPartLogsPg(store: TabularStore, partId: string, fn: Listener): Promise<() => void> {
  return pgLogFollower(store).follow(partId, fn);
}
