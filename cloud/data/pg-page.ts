// One page of capture-time-ordered rows on PostgreSQL (issue 33's scale-out mode). DuckDB's page reader
// (page-query.ts) bounds the scan by a time window because DuckDB has no index to walk; PostgreSQL
// walks the (organization_id, time_requested, seq) index of the table in the page's order, so the
// plain top-N with the cursor's condition is already bounded by the page size.
//
// Cursors count microseconds (cursor.ts) and a JS Date only milliseconds: the cursor's time goes in as
// a bigint of microseconds, turned into the TIMESTAMPTZ by the database, so a page boundary between two
// rows of one millisecond loses nothing.
import type { NeutralWhere } from './filter.js';
import type { Page } from './rows.js';
import type { Dialect, SqlValue, TabularRow, TabularStore } from '../store/tabular.js';

/** The row's capture time in microseconds since the epoch, as a bigint column named t_us (for cursorOf). */
export function timeMicrosColumn(dialect: Dialect, column = 'time_requested'): string {
  // extract(epoch ...) is numeric on PostgreSQL 14 and later: exact to the microsecond.
  return dialect === 'duckdb' ? `epoch_us(${column}) AS t_us` : `CAST(extract(epoch FROM ${column}) * 1000000 AS bigint) AS t_us`;
}

/**
 * A TIMESTAMPTZ from two parameters (PostgreSQL): an infinity as text, or else a bigint of
 * microseconds since the epoch. A cursor may name any time of DuckDB's range (cursor.ts), which is
 * wider than PostgreSQL's (from 4713 BC): a time past either end is the infinity on that side there,
 * which orders the same against every stored row, where the arithmetic would fail out of range.
 */
const pgMicros = "COALESCE(CAST(? AS TIMESTAMPTZ), TIMESTAMPTZ 'epoch' + CAST(? AS bigint) * INTERVAL '1 microsecond')";
/** 4714-11-24 BC, PostgreSQL's first TIMESTAMPTZ, in microseconds since the epoch. */
const pgFirstMicros = -210_866_803_200_000_000n;
/** Far past any capture time (about year 146,000), short of where the microseconds' product overflows. */
const pgLastMicros = 2n ** 62n;

function pgTimeParams(us: bigint): SqlValue[] {
  if (us < pgFirstMicros) return ['-infinity', 0n];
  if (us > pgLastMicros) return ['infinity', 0n];
  return [null, us];
}

/** The page's condition past its cursor (with a leading AND), and its parameters, on PostgreSQL. */
export function pgAfter(page: Page): { sql: string; params: SqlValue[] } {
  const cursor = page.cursor;
  if (!cursor) return { sql: '', params: [] };
  const sql = page.ascending
    ? ` AND (time_requested, seq) > (${pgMicros}, CAST(? AS bigint))`
    : ` AND (time_requested, seq) < (${pgMicros}, CAST(? AS bigint))`;
  return { sql, params: [...pgTimeParams(cursor.timeMicros), cursor.seq] };
}

/** The page's rows on PostgreSQL: `columns` of `table` matching `where`, past the cursor, in the page's order. */
export async function readPagePg(
  store: TabularStore,
  table: 'tabular_data' | 'binary_data',
  columns: string,
  where: NeutralWhere,
  page: Page,
): Promise<TabularRow[]> {
  const after = pgAfter(page);
  return store.query(`SELECT ${columns} FROM ${table} WHERE (${where.sql})${after.sql} ORDER BY ${page.orderBy} LIMIT ${page.limit}`, [
    ...where.params,
    ...after.params,
  ]);
}
