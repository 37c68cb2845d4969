// The `last` page marker: an opaque token naming the last item returned, as (capture time, seq). The
// next page holds the items strictly after it in the requested order, so pages stay stable while new
// data arrives.
import { invalidArgument } from '../../core/shared/status-error.js';

export interface Cursor {
  /** time_requested in microseconds since the epoch. */
  timeMicros: bigint;
  seq: bigint;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.timeMicros}:${cursor.seq}`).toString('base64url');
}

export function decodeCursor(last: string): Cursor {
  const text = Buffer.from(last, 'base64url').toString('utf8');
  const match = /^(-?\d+):(\d+)$/.exec(text);
  if (!match) throw invalidArgument('last must be the `last` value returned by a previous call of the same query');
  return { timeMicros: BigInt(match[1]), seq: BigInt(match[2]) };
}
