// DuckDB TIMESTAMPTZ values count microseconds since the epoch; JavaScript Dates count milliseconds.
import { timestampTZValue, type DuckDBTimestampTZValue } from '@duckdb/node-api';

/** A TIMESTAMPTZ parameter for a Date (now, by default). */
export const timestampValue = (date: Date = new Date()): DuckDBTimestampTZValue => timestampTZValue(BigInt(date.getTime()) * 1000n);
