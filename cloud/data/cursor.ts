// The `last` page marker: an opaque token naming the last item returned, as (capture time, seq). The
// next page holds the items strictly after it in the requested order, so pages stay stable while new
// data arrives.
import { invalidArgument } from '../../core/serving/status-error.js';

export interface Cursor {
  /** time_requested in microseconds since the epoch. */
  timeMicros: bigint;
  seq: bigint;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.timeMicros}:${cursor.seq}`).toString('base64url');
}

const INT64_MAX = 2n ** 63n - 1n;
// DuckDB's TIMESTAMP WITH TIME ZONE holds microseconds in an int64 whose two extremes mean infinity.
const TIME_MAX = INT64_MAX - 1n;
const TIME_MIN = -INT64_MAX;

const notOurs = () => invalidArgument('data_request.last: must be the `last` value returned by a previous call of the same query');

/**
 * A token is checked in full here, ranges too: a forged one must be INVALID_ARGUMENT naming the field,
 * not a conversion error deep in the database call (INTERNAL).
 */
export function decodeCursor(last: string): Cursor {
  const text = Buffer.from(last, 'base64url').toString('utf8');
  const match = /^(-?\d{1,20}):(\d{1,20})$/.exec(text);
  if (!match) throw notOurs();
  const cursor = { timeMicros: BigInt(match[1]), seq: BigInt(match[2]) };
  if (cursor.timeMicros < TIME_MIN || cursor.timeMicros > TIME_MAX || cursor.seq > INT64_MAX) throw notOurs();
  return cursor;
}
