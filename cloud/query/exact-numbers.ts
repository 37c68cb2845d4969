// Integers that BSON cannot hold exactly. DuckDB's HUGEINT, UHUGEINT and UBIGINT reach past int64 (a
// sum of two BIGINT maxima is a HUGEINT), and BSON's widest integer is int64: encoding such a value as
// Int64 wraps it (9223372036854775807 + 9223372036854775807 came back as -2). Never a wrong number:
// an integer that fits int64 stays an Int64 (bigint), one of up to 34 digits becomes a Decimal128
// (exact; clients get a decimal), and a longer one becomes its decimal text.
import { Decimal128 } from 'bson';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function exactInteger(value: bigint): bigint | Decimal128 | string {
  if (value >= INT64_MIN && value <= INT64_MAX) return value;
  const text = value.toString();
  return text.replace('-', '').length <= 34 ? Decimal128.fromString(text) : text;
}

/** Replaces, in place and at any depth, bigints that int64 cannot hold. */
export function exactNumbers<T>(value: T): T {
  if (typeof value === 'bigint') return exactInteger(value) as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = exactNumbers(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) obj[key] = exactNumbers(obj[key]);
  }
  return value;
}
