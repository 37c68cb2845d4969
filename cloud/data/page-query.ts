// Reads one page in capture-time order without scanning the whole table. Data mostly arrives in
// capture-time order, so DuckDB's per-row-group min/max of time_requested can skip almost every row
// group once the query bounds the time. We bound it to a window next to the page's start (the newest
// time, or the cursor), sized from the table's time span and row count, and widen the window 16-fold
// until the page fills. A full page from inside the window is exact: every row outside it is further
// from the start than every row inside. When the window covers the whole span, the query is unbounded.
// For the newest-first first page, the most recently inserted rows (the highest seq, which DuckDB
// finds by row-group statistics too) usually hold the newest capture times: the page's last capture
// time among them is a lower bound that at least `limit` matching rows reach, so a query bounded by it
// is exact, whatever gaps the capture times have. The bound and the page are one statement.
// The table's time span and row count only size the window, never decide the result, so a cached copy
// (refreshed every couple of seconds) is enough and spares a scan per page.
import { timestampTZValue } from '@duckdb/node-api';
import type { Row, Store } from '../store/store.js';
import type { Where } from './filter.js';
import type { Page } from './rows.js';

interface Span {
  lo: bigint | null;
  hi: bigint | null;
  n: bigint;
  at: number;
}

const spanTtlMs = 2000;
const spans = new WeakMap<Store, Map<string, Span>>();

async function spanOf(store: Store, table: string): Promise<Span> {
  let byTable = spans.get(store);
  if (!byTable) spans.set(store, (byTable = new Map()));
  const cached = byTable.get(table);
  if (cached && Date.now() - cached.at < spanTtlMs) return cached;
  const [row] = await store.query(`SELECT epoch_us(min(time_requested)) AS lo, epoch_us(max(time_requested)) AS hi, count(*) AS n FROM ${table}`);
  const span: Span = {
    lo: row.lo === null ? null : BigInt(row.lo as bigint),
    hi: row.hi === null ? null : BigInt(row.hi as bigint),
    n: BigInt(row.n as bigint),
    at: Date.now(),
  };
  byTable.set(table, span);
  return span;
}

/** Below this many rows a plain top-N is already cheap. */
export const smallTableRows = 50_000n;

export async function readPage(
  store: Store,
  table: 'tabular_data' | 'binary_data',
  columns: string,
  where: Where,
  page: Page,
  smallTable = smallTableRows,
): Promise<Row[]> {
  const run = (extra: string, extraParams: unknown[]) =>
    store.query(`SELECT ${columns} FROM ${table} WHERE ${where.sql}${page.after}${extra} ORDER BY ${page.orderBy} LIMIT ${page.limit}`, [
      ...where.params,
      ...page.afterParams,
      ...(extraParams as never[]),
    ]);
  const { lo, hi, n } = await spanOf(store, table);
  if (n < smallTable || lo === null || hi === null) return run('', []);
  if (!page.ascending && !page.cursor) {
    // One statement, not two: the bound is a scalar subquery, which DuckDB evaluates first and pushes
    // into the scan as a filter, so row groups are still skipped and a round trip is saved. When fewer
    // than `limit` recent rows match, the bound is NULL, nothing is returned and the window search runs.
    const recent = store.lastSeq(table) - BigInt(page.limit) * 8n;
    const rows = await run(
      ` AND time_requested >= (SELECT time_requested FROM ${table} WHERE ${where.sql} AND seq > ?
         ORDER BY time_requested DESC LIMIT 1 OFFSET ${page.limit - 1})`,
      [...where.params, recent],
    );
    if (rows.length === page.limit) return rows;
  }
  const span = hi - lo;
  if (span <= 0n) return run('', []);
  const start = page.cursor ? page.cursor.timeMicros : page.ascending ? lo : hi;
  // Expect about 4 pages' worth of rows in the first window if times were spread evenly.
  let window = (span * BigInt(page.limit) * 4n) / n + 1000n;
  for (;;) {
    const edge = page.ascending ? start + window : start - window;
    if (page.ascending ? edge >= hi : edge <= lo) return run('', []);
    const rows = await run(page.ascending ? ' AND time_requested <= ?' : ' AND time_requested >= ?', [timestampTZValue(edge)]);
    if (rows.length === page.limit) return rows;
    window *= 16n;
  }
}
