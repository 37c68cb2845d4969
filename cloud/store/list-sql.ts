// VARCHAR[] column updates and tests that DuckDB and PostgreSQL spell differently (tags and
// dataset_ids of binary_data). Each returns the SQL of one expression with one `?` (or the given
// placeholder) for the element; the element is a string. Written once here so that a module's
// statement reads the same on both backends apart from the expression. Tests that both backends agree:
// cloud/store/tabular-store.test.ts. (Overlap, `column && CAST(? AS VARCHAR[])`, and `IN (SELECT
// unnest(CAST(? AS VARCHAR[])))` with a string[] parameter are the same on both and need no helper.)
import type { Dialect } from './tabular.js';

/** The column's list without any element equal to the value (NULL stays NULL). */
export function listWithout(dialect: Dialect, column: string, placeholder = '?'): string {
  return dialect === 'duckdb' ? `list_filter(${column}, x -> x <> ${placeholder})` : `array_remove(${column}, CAST(${placeholder} AS VARCHAR))`;
}

/** The column's list with the value added, each element once, sorted by bytes (a NULL list becomes [value]). */
export function listWith(dialect: Dialect, column: string, placeholder = '?'): string {
  return dialect === 'duckdb'
    ? `list_sort(list_distinct(list_append(${column}, ${placeholder})))`
    : `ARRAY(SELECT x FROM unnest(array_append(${column}, CAST(${placeholder} AS VARCHAR))) AS u(x) WHERE x IS NOT NULL GROUP BY x ORDER BY x COLLATE "C")`;
}

/** Whether the column's list holds the value (NULL for a NULL list, false in a WHERE). */
export function listHas(dialect: Dialect, column: string, placeholder = '?'): string {
  return dialect === 'duckdb' ? `list_contains(${column}, ${placeholder})` : `CAST(${placeholder} AS VARCHAR) = ANY(${column})`;
}
