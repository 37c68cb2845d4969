// Microsecond times in statements that run on both TabularStore backends (issue 33). A Date parameter
// carries milliseconds, but cursors name a row's time to the microsecond (what DuckDB and PostgreSQL
// store), so a cursor's time goes in as ISO-8601 text with six fractional digits, written
// `CAST(? AS TIMESTAMPTZ)`, which both parse to the same instant (and both fold into a constant, so a
// comparison with it still narrows a scan). A row's time comes out as whole microseconds through
// epochMicrosSql: DuckDB's epoch_us(), PostgreSQL's exact numeric EXTRACT(EPOCH ...).
import type { Dialect } from './tabular.js';

/** The SQL of a BIGINT: the column's time as microseconds since the epoch. */
export function epochMicrosSql(dialect: Dialect, column: string): string {
  return dialect === 'duckdb' ? `epoch_us(${column})` : `CAST(EXTRACT(EPOCH FROM ${column}) * 1000000 AS BIGINT)`;
}

// Protobuf Timestamps (every time the API takes) lie in years 1 to 9999; a cursor outside them is
// forged, and clamping it keeps the text in the form both databases parse. No stored time is outside.
const MIN_MICROS = BigInt(Date.parse('0001-01-01T00:00:00Z')) * 1000n;
const MAX_MICROS = BigInt(Date.parse('9999-12-31T23:59:59.999Z')) * 1000n + 999n;

/** microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, for `CAST(? AS TIMESTAMPTZ)`. */
export function timestampText(micros: bigint): string {
  const clamped = micros < MIN_MICROS ? MIN_MICROS : micros > MAX_MICROS ? MAX_MICROS : micros;
  // Floor division: the fraction of a time before 1970 counts forward from the millisecond before it.
  let ms = clamped / 1000n;
  if (ms * 1000n > clamped) ms -= 1n;
  const fraction = clamped - ms * 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, -1)}${fraction.toString().padStart(3, '0')}Z`;
}
