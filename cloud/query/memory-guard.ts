// A backstop for the memory DuckDB does not account for. DuckDB's memory_limit bounds its buffer pool,
// and most operators (sorts, joins, aggregates, string_agg) refuse or spill at that limit; but some
// allocations pass beside it (a recursive CTE's working rows, a huge string value being built), and
// V8's own heap holds converted results. While user queries run, the guard samples the process' RSS
// every few milliseconds. When it passes the limit, it interrupts ONE query, the one that holds the
// most by its accounting (below), and waits until that query has ended before it judges again: memory
// comes back only once the interrupted query has let go of it, and a guard that fired at everyone in
// the meantime would stop innocent queries beside a memory bomb. Only if RSS is still over the limit
// after the victim ended does the next-largest query go, and so on until RSS is back under the cap.
// The data API's own queries are not watched: they are small and bounded by their page sizes.
//
// Accounting. DuckDB reports no memory per connection while a query runs, so a query's figure is:
// - every rise in RSS seen while it ran, shared equally among the queries running at that moment (a
//   query that ran alone while RSS climbed owns all of that climb; one that started after the climb
//   owns none of it), plus
// - what the query says it holds itself (`held`: the bytes of the result documents it has built).
// Ties go to the query that started first.
//
// Only a query that grew the process itself can be stopped. RSS does not come back down after memory has
// been inflated by something else (an upload, a burst of gRPC buffers, the allocator keeping freed
// pages): a guard that stopped whichever query ran while RSS was over the cap then failed every
// organization's `SELECT 1` from that moment on (issue 27, finding 8). So a query is a candidate only when
// its own figure (above) reaches `minGrowthBytes` (PLATFORM_QUERY_RSS_MIN_GROWTH_MB); a query that started
// after the inflation and holds little runs, while a runaway one still passes that figure long before it
// can end the process. The cost: RSS may pass the cap by up to minGrowthBytes per running query.
export interface MemoryWatchOptions {
  /** Bytes the query holds outside DuckDB (its converted result so far); read when the guard chooses. */
  held?: () => number;
}

interface Watcher {
  readonly seq: number;
  readonly onExceeded: () => void;
  readonly held?: () => number;
  /** RSS growth attributed to this query, in bytes. */
  grown: number;
  fired: boolean;
}

/** The default of PLATFORM_QUERY_RSS_MIN_GROWTH_MB: growth below this never makes a query the one to stop. */
export const DEFAULT_MIN_GROWTH_BYTES = 64 * 2 ** 20;

export class MemoryGuard {
  private readonly watchers = new Set<Watcher>();
  private timer?: NodeJS.Timeout;
  private lastRss?: number;
  private nextSeq = 0;

  constructor(
    /** RSS in bytes above which the largest running user query is interrupted. */
    readonly limitBytes: number,
    private readonly rss: () => number = () => process.memoryUsage.rss(),
    private readonly intervalMs = 10,
    /** A query whose own growth (RSS rises while it ran, plus what it holds) is below this is never stopped. */
    readonly minGrowthBytes = DEFAULT_MIN_GROWTH_BYTES,
  ) {}

  /**
   * Calls onExceeded (once) if RSS passes the limit before the returned function is called and this
   * query is the one chosen to stop (see above). The returned function must be called when the query
   * has ended, interrupted or not: the guard waits for it before choosing again.
   */
  watch(onExceeded: () => void, options: MemoryWatchOptions = {}): () => void {
    const watcher: Watcher = { seq: this.nextSeq++, onExceeded, held: options.held, grown: 0, fired: false };
    this.watchers.add(watcher);
    if (!this.timer) {
      // The RSS when watching starts is the baseline: only rises from here on are anyone's growth.
      this.lastRss = this.rss();
      this.timer = setInterval(() => this.sample(), this.intervalMs).unref();
    }
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** User queries being watched now. */
  get running(): number {
    return this.watchers.size;
  }

  /** One sample: attribute the RSS change, and stop the largest query if RSS is over the limit. Public for tests. */
  sample(): void {
    const rss = this.rss();
    const running = [...this.watchers];
    if (this.lastRss !== undefined && rss > this.lastRss && running.length > 0) {
      const share = (rss - this.lastRss) / running.length;
      for (const w of running) w.grown += share;
    }
    this.lastRss = rss;
    if (rss <= this.limitBytes) return;
    // A query already told to stop has not ended yet: its memory is still held. Wait for it.
    if (running.some((w) => w.fired)) return;
    let victim: Watcher | undefined;
    let victimSize = -1;
    for (const w of running) {
      const size = w.grown + Math.max(0, w.held?.() ?? 0);
      if (size < this.minGrowthBytes) continue; // it did not cause this: RSS was inflated before or beside it
      if (size > victimSize || (size === victimSize && victim && w.seq < victim.seq)) {
        victim = w;
        victimSize = size;
      }
    }
    if (!victim) return;
    victim.fired = true;
    victim.onExceeded();
  }
}
