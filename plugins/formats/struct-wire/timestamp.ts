// google.protobuf.Timestamp{1 seconds: int64, 2 nanos: int32} from epoch milliseconds, the other
// well-known type every capture record carries, written as ts-proto's toTimestamp + Timestamp.encode
// write it (a zero field left out). Only for whole milliseconds at or after the epoch: before it, nanos
// are negative and take a ten-byte varint; callers leave those to the generated encoder.
import { varintSize } from './size.js';
import type { StructWriter } from './writer.js';

/** Whether `ms` is a time this module writes (a whole number of milliseconds, not negative). */
export const isPlainTime = (ms: number): boolean => ms >= 0 && Number.isInteger(ms);

/** Bytes of a Timestamp's content. */
export function timestampSize(ms: number): number {
  const seconds = Math.trunc(ms / 1000);
  const nanos = (ms % 1000) * 1_000_000;
  return (seconds !== 0 ? 1 + varintSize(seconds) : 0) + (nanos !== 0 ? 1 + varintSize(nanos) : 0);
}

/** A Timestamp as length-delimited field `field` of the message being written. */
export function writeTimestamp(out: StructWriter, field: number, ms: number): void {
  const seconds = Math.trunc(ms / 1000);
  const nanos = (ms % 1000) * 1_000_000;
  out.byte((field << 3) | 2);
  out.varint(timestampSize(ms));
  if (seconds !== 0) {
    out.byte(8);
    out.varint(seconds);
  }
  if (nanos !== 0) {
    out.byte(16);
    out.varint(nanos);
  }
}
