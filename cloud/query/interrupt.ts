// One way to stop a user's DuckDB work, shared by TabularDataBySQL (sql/limited-run.ts) and the PostgreSQL
// endpoint (pg/pg-session.ts): DuckDB itself is interrupted when the deadline passes, when the service-wide
// memory guard fires (DuckDB's memory_limit does not count every allocation, see memory-guard.ts), or when
// the caller cancels. Each caller turns the reason into its own error type (a gRPC status, a SQLSTATE).
import type { DuckDBConnection } from '@duckdb/node-api';
import type { MemoryGuard } from './memory-guard.js';

/** How often a stopped connection is interrupted again until its work ends. */
const REINTERRUPT_MS = 20;

export type StopReason = 'time' | 'memory' | 'cancel';

export interface Stops {
  /** Epoch ms after which DuckDB is interrupted. */
  deadline: number;
  memory?: MemoryGuard;
  /**
   * While the work runs, interruptOn puts on it a `cancel` function that interrupts DuckDB (a CancelRequest)
   * and removes it when the work ends. A plain holder rather than an AbortSignal: the PostgreSQL endpoint
   * guards every piece of DuckDB work (three per point query), and an AbortController each cost more than
   * the rest of the guard.
   */
  canceller?: { cancel?: () => void };
  /** What the work holds outside DuckDB (result bytes), so that the memory guard stops the largest query. */
  held?: () => number;
}

/**
 * Runs `body` on `conn` until one of `stops` interrupts it. Work that was stopped fails with
 * `stopped(reason)`, even when DuckDB ended quietly instead of failing, so a cut-short result is never
 * taken as complete; any other error is rethrown as it is.
 */
export async function interruptOn<T>(conn: DuckDBConnection, stops: Stops, body: () => Promise<T>, stopped: (reason: StopReason) => Error): Promise<T> {
  let reason: StopReason | undefined;
  // DuckDB's interrupt only reaches the statement running at that instant: one that lands between the
  // body's statements (after the inspection, before the query) would be lost and the query would run on
  // unbounded. So once stopped, the connection is interrupted again every few ms until the body ends.
  let repeat: NodeJS.Timeout | undefined;
  const stop = (r: StopReason) => {
    reason ??= r;
    conn.interrupt();
    repeat ??= setInterval(() => conn.interrupt(), REINTERRUPT_MS);
  };
  const timer = setTimeout(() => stop('time'), Math.max(1, stops.deadline - Date.now()));
  const unwatch = stops.memory?.watch(() => stop('memory'), { held: stops.held });
  if (stops.canceller) stops.canceller.cancel = () => stop('cancel');
  try {
    const value = await body();
    if (reason) throw stopped(reason);
    return value;
  } catch (err) {
    if (reason) throw stopped(reason);
    throw err;
  } finally {
    clearTimeout(timer);
    clearInterval(repeat);
    unwatch?.();
    if (stops.canceller) stops.canceller.cancel = undefined;
  }
}

/** What a query interrupted by the memory guard is told, after its field or SQLSTATE. */
export const overMemoryMessage = (memory: MemoryGuard, what: string) =>
  `the service's memory passed its ${Math.round(memory.limitBytes / 2 ** 20)} MiB limit (PLATFORM_QUERY_RSS_LIMIT_MB) while this ${what} ran, ` +
  `and it was the largest running query, having grown the service by at least ${Math.round(memory.minGrowthBytes / 2 ** 20)} MiB ` +
  '(PLATFORM_QUERY_RSS_MIN_GROWTH_MB), so it was interrupted; make it build smaller values';
