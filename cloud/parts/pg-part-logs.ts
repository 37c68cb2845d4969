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
// Following (TailRobotPartLogs): each process polls, for every part it has tails of, the entries with
// a seq above the last one it handed out (one statement for all of them, every FOLLOW_POLL_MS), so a
// tail served by one process sees the entries uploaded through any other.
import type { PgStore } from '../store/pg-store.js';
import type { SqlSession, TabularStore } from '../store/tabular.js';
import type { StoredLogEntry } from './log-entry.js';

/** How often the followed parts are polled for new entries: the most a tail lags behind an upload. */
export const FOLLOW_POLL_MS = 200;
/** Entries read per part and poll; a part with more is polled again at once. */
const FOLLOW_BATCH = 5000;

const insertBatch = `INSERT INTO logs.part_logs (part_id, time, seq, level, logger_name, message, fields)
  SELECT ?, e.time, nextval('logs.part_logs_seq'), e.level, e.logger_name, e.message, e.fields
  FROM unnest(CAST(? AS TIMESTAMPTZ[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]))
    WITH ORDINALITY AS e(time, level, logger_name, message, fields, n)
  ORDER BY e.n`;

const isPg = (store: TabularStore): store is PgStore => store.dialect === 'postgres' && 'transactAt' in store;

/** Stores entries of one part in one statement; resolves once they are committed. */
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
}

type Listener = (entries: StoredLogEntry[]) => void;

interface Followed {
  /** The highest seq handed to the listeners. */
  after: bigint;
  listeners: Set<Listener>;
}

/** The tails of one store's parts in this process, fed by polling (see the header). */
class PgLogFollower {
  private readonly parts = new Map<string, Followed>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly store: TabularStore) {}

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
    this.timer ??= setInterval(() => void this.poll(), FOLLOW_POLL_MS).unref();
    const part = followed;
    return () => {
      part.listeners.delete(fn);
      if (part.listeners.size > 0 || this.parts.get(partId) !== part) return;
      this.parts.delete(partId);
      if (this.parts.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (let again = true; again && this.parts.size > 0;) again = await this.pollOnce();
    } catch {
      // The database is away: the next poll tries again, from the same seqs.
    } finally {
      this.polling = false;
    }
  }

  /** One read of every followed part; true when some part had more than one batch waiting. */
  private async pollOnce(): Promise<boolean> {
    const parts = [...this.parts.entries()];
    const rows = await this.store.query(
      `SELECT w.part_id, l.time, l.seq, l.level, l.logger_name, l.message, l.fields
       FROM unnest(CAST(? AS VARCHAR[]), CAST(? AS BIGINT[])) AS w(part_id, after)
       CROSS JOIN LATERAL (
         SELECT time, seq, level, logger_name, message, fields FROM logs.part_logs p
         WHERE p.part_id = w.part_id AND p.seq > w.after ORDER BY p.seq LIMIT ${FOLLOW_BATCH}) l
       ORDER BY w.part_id, l.seq`,
      [parts.map(([id]) => id), parts.map(([, f]) => String(f.after))],
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
    let more = false;
    for (const [id, got] of byPart) {
      const followed = this.parts.get(id);
      if (!followed) continue; // no longer followed
      if (got.length >= FOLLOW_BATCH) more = true;
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

/** See PgLogFollower.follow. */
export function followPartLogsPg(store: TabularStore, partId: string, fn: Listener): Promise<() => void> {
  let follower = followers.get(store);
  if (!follower) followers.set(store, (follower = new PgLogFollower(store)));
  return follower.follow(partId, fn);
}
