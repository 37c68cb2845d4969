// A backstop for the memory DuckDB does not account for. DuckDB's memory_limit bounds its buffer pool,
// and most operators (sorts, joins, aggregates, string_agg) refuse or spill at that limit; but some
// allocations pass beside it (a recursive CTE's working rows, a huge string value being built), and
// V8's own heap holds converted results. While user queries run, the guard samples the process' RSS
// every few milliseconds; when it passes the limit, every user query running at that moment is
// interrupted and answered with RESOURCE_EXHAUSTED naming the limit. The data API's own queries are not
// watched: they are small and bounded by their page sizes.
export class MemoryGuard {
  private readonly watchers = new Set<() => void>();
  private timer?: NodeJS.Timeout;

  constructor(
    /** RSS in bytes above which running user queries are interrupted. */
    readonly limitBytes: number,
    private readonly rss: () => number = () => process.memoryUsage.rss(),
    private readonly intervalMs = 10,
  ) {}

  /** Calls onExceeded (once) if RSS passes the limit before the returned function is called. */
  watch(onExceeded: () => void): () => void {
    let fired = false;
    const watcher = () => {
      if (fired) return;
      fired = true;
      onExceeded();
    };
    this.watchers.add(watcher);
    this.timer ??= setInterval(() => this.sample(), this.intervalMs).unref();
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private sample(): void {
    if (this.rss() <= this.limitBytes) return;
    for (const watcher of [...this.watchers]) watcher();
  }
}
